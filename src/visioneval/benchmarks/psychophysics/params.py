"""What one stimulus is: the one schema of the parameters every PNG carries in its `tEXt`
chunk (key `visioneval`) and the dataset holds as columns."""

from __future__ import annotations

import json
from typing import Literal

from PIL import PngImagePlugin
from pydantic import BaseModel, ConfigDict

from visioneval.io.pngtext import read_model, text_info

Experiment = Literal["detection", "presence", "conjunction", "setsize", "heterogeneity"]
CHOICE_EXPERIMENTS = ("detection", "setsize")  # the three-way question; the rest: yes/no
Feature = Literal["orientation", "color", "size", "color+orientation"]
CONJUNCTION: Feature = "color+orientation"
FEATURES: tuple[Feature, ...] = ("orientation", "color", "size")  # SalBench's P3 order
POOL_FOLDER = "detection-pool"  # the adaptive method's stimuli, beside the experiments'
UNITS: dict[str, str] = {"orientation": "deg", "color": "dE00", "size": "log_area_ratio",
                         CONJUNCTION: "dE00"}
"""A feature's level unit: degrees of rotation, CIEDE2000, ln(target area / distractor area)
(its magnitude; `sign` says larger or smaller). A conjunction's level is its colour
difference; its orientation difference is `conjunction_deg`."""


class StimulusParams(BaseModel):
    """One stimulus, as written into its PNG and its dataset row.

    experiment: detection (which feature differs, 3 alternatives), presence (is one object
    different: yes/no, half the arrays without a target), conjunction (yes/no, a colour x
    orientation conjunction target), setsize (detection at one level, more items),
    heterogeneity (presence among distractors jittered by `spread`). `level` is the
    target's difference (>= 0) in `unit`, `sign` its direction (+1: larger,
    counter-clockwise, hue up). A target-absent array keeps the level of the condition it
    belongs to. `spread` is the distractors' jitter
    around the base value in the feature's unit (0: identical distractors). `target_box`
    is (x0, y0, x1, y1) in pixels of the `image_size` square image, None without a target."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    experiment: Experiment
    feature: Feature
    level: float
    unit: str
    sign: int
    set_size: int
    target_present: bool
    spread: float
    seed: int
    image_size: int
    target_box: tuple[float, float, float, float] | None
    conjunction_deg: float | None = None

    def text(self) -> str:
        return json.dumps(self.model_dump(), sort_keys=True, separators=(",", ":"))


def png_info(params: StimulusParams) -> PngImagePlugin.PngInfo:
    """The `tEXt` chunk a stimulus PNG is saved with."""
    return text_info(params.text())


def read_params(png: bytes) -> StimulusParams:
    """The parameters a stimulus PNG carries; ValueError with one line if it carries none."""
    return read_model(png, StimulusParams)
