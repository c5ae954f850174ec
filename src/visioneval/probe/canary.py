"""The resolution probe's canary images: a grey canvas with a centred square patch of
stripes (a cosine grating) of known period and orientation. A grating finer than twice the
pixel pitch of the image the model receives cannot be represented there, so the finest
period a model still tells apart says how far the image was reduced on its way.

The period is in pixels of the image as stored (sent). Each PNG carries its parameters in a
`visioneval` tEXt chunk, as the psychophysics stimuli do; the answer never depends on it
(the loopback's canary reader looks at the pixels only, and a server that resizes an image
re-encodes it without the chunk).

The series: `levels` bands of period, log-spaced from `finest` to `coarsest`, `trials`
images per band. Each trial's period is drawn log-uniformly within its band and its
orientation and phase at random (seeded), so the fit sees many distinct periods and a sharp
loss of detail is located between them, not only between band edges."""

from __future__ import annotations

import io
import math
import random
from typing import Literal

import numpy as np
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, model_validator

from visioneval.io.pngtext import read_model, text_info

Orientation = Literal["horizontal", "vertical"]
ORIENTATIONS: tuple[Orientation, Orientation] = ("horizontal", "vertical")
QUESTION = ("The centre of this image is a square patch of stripes on a grey background. "
            "Are the stripes horizontal or vertical? Answer with one word: horizontal or "
            "vertical.")
GREY = 128  # the canvas, and the grating's mean
AMPLITUDE = 100  # the grating runs from 28 to 228
PATCH_FRACTION = 0.75  # the patch's side over the canvas side: it spans 1/8 to 7/8
MIN_CYCLES = 3  # the coarsest grating shows at least this many periods across the patch


class CanaryDesign(BaseModel):
    """The series of canaries: `levels` period bands x `trials` images = the requests sent.
    The defaults (16 x 10 = 160 requests on a 2048-pixel canvas) cover periods of 2 to 64
    pixels, i.e. effective long sides from about the canvas's own down to 1/40 of it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    long_side: int = Field(2048, ge=128, le=8192)
    levels: int = Field(16, ge=2, le=64)
    trials: int = Field(10, ge=1, le=100)
    finest: float = Field(2.0, ge=2.0)
    coarsest: float = 64.0
    seed: int = 0

    @model_validator(mode="after")
    def _fits(self) -> CanaryDesign:
        if self.coarsest <= self.finest:
            raise ValueError(f"the coarsest period ({self.coarsest:g} px) must exceed the "
                             f"finest ({self.finest:g} px)")
        if self.coarsest * MIN_CYCLES > self.patch_side:
            raise ValueError(f"a {self.coarsest:g}-pixel period shows fewer than "
                             f"{MIN_CYCLES} stripes on a {self.long_side}-pixel canvas "
                             f"(patch {self.patch_side} px): use a larger canvas or a "
                             "smaller coarsest period")
        return self

    @property
    def patch_side(self) -> int:
        return round(self.long_side * PATCH_FRACTION)

    @property
    def requests(self) -> int:
        return self.levels * self.trials

    def edges(self) -> list[float]:
        """The `levels` + 1 band edges, log-spaced from `finest` to `coarsest`."""
        step = math.log(self.coarsest / self.finest) / self.levels
        return [self.finest * math.exp(step * i) for i in range(self.levels + 1)]


class CanaryParams(BaseModel):
    """One canary, as written into its PNG: the grating's period (pixels of the stored
    image), orientation ("vertical": stripes running top to bottom, the grey level changing
    along x), phase (radians, of the cosine at the patch's centre), its band and trial,
    and the canvas."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    probe: Literal["resolution"] = "resolution"
    period: float
    orientation: Orientation
    phase: float
    level: int
    trial: int
    long_side: int
    patch_side: int
    amplitude: int = AMPLITUDE
    seed: int

    def text(self) -> str:
        return self.model_dump_json()


def series(design: CanaryDesign) -> list[CanaryParams]:
    """Every canary of the design, band by band (send them shuffled)."""
    rng = random.Random(f"resolution-canary:{design.seed}")
    edges = design.edges()
    out = []
    for level in range(design.levels):
        low, high = math.log(edges[level]), math.log(edges[level + 1])
        for trial in range(design.trials):
            out.append(CanaryParams(
                period=math.exp(rng.uniform(low, high)), orientation=rng.choice(ORIENTATIONS),
                phase=rng.uniform(0.0, 2 * math.pi), level=level, trial=trial,
                long_side=design.long_side, patch_side=design.patch_side, seed=design.seed))
    return out


def render(params: CanaryParams) -> bytes:
    """The canary as an 8-bit greyscale PNG with its `visioneval` text chunk."""
    side, patch = params.long_side, params.patch_side
    start = (side - patch) // 2
    centre = np.arange(patch) + 0.5 - patch / 2
    wave = GREY + params.amplitude * np.cos(2 * np.pi * centre / params.period + params.phase)
    profile = np.clip(np.rint(wave), 0, 255).astype(np.uint8)
    canvas = np.full((side, side), GREY, dtype=np.uint8)
    block = canvas[start:start + patch, start:start + patch]
    block[:] = profile[None, :] if params.orientation == "vertical" else profile[:, None]
    buf = io.BytesIO()
    Image.fromarray(canvas).save(buf, format="PNG", pnginfo=text_info(params.text()))
    return buf.getvalue()


def read_canary(png: bytes) -> CanaryParams:
    """The parameters a canary PNG carries; ValueError with one line if it carries none."""
    return read_model(png, CanaryParams, "a resolution probe image")
