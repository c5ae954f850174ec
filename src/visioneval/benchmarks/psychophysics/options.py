"""The psychophysics benchmark's options: `visioneval psychophysics`'s flags, run.json's
`options` and the Python API's, one model (light: read when the command line starts)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from visioneval.core.benchmark import OWN_OPTIONS, LocalPath

ExperimentName = Literal["detection", "presence", "conjunction", "setsize", "heterogeneity"]
EXPERIMENT_NAMES: tuple[ExperimentName, ...] = ("detection", "presence", "conjunction",
                                               "setsize", "heterogeneity")


class PsychophysicsOptions(BaseModel, frozen=True):
    """One line of help each (docs/psychophysics.md explains them)."""

    data: LocalPath = Field(description="Folder made by `visioneval data "
                            "synth-psychophysics`.")
    experiments: list[ExperimentName] | None = Field(
        None, description="detection, presence, conjunction, setsize, heterogeneity.",
        json_schema_extra={"shown_default": "all in the data"})
    num_samples: int | None = Field(None, ge=1, description="First N rows of each "
                                    "experiment.",
                                    json_schema_extra={"flags": ["--samples"],
                                                       "shown_default": "all"})
    method: Literal["constant", "adaptive"] = Field(
        "constant", description="Detection trials: every stored stimulus (constant stimuli) "
        "or chosen from the answers so far (adaptive: the Psi method).",
        json_schema_extra={"panel": OWN_OPTIONS})
    adaptive_trials: int = Field(120, ge=2, description="Detection trials per feature with "
                                 "--method adaptive.",
                                 json_schema_extra={"panel": OWN_OPTIONS})
    criterion: float = Field(0.75, gt=1 / 3, lt=1.0,
                             description="Proportion correct that defines the threshold.",
                             json_schema_extra={"panel": OWN_OPTIONS})
    form: Literal["weibull", "logistic"] = Field(
        "weibull", description="Sigmoid of the psychometric function.",
        json_schema_extra={"panel": OWN_OPTIONS})
    bootstrap: int = Field(1000, ge=0, description="Parametric-bootstrap refits per fit "
                           "(0: no intervals).", json_schema_extra={"panel": OWN_OPTIONS})
    seed: int = Field(0, description="Seed of the bootstrap.",
                      json_schema_extra={"panel": OWN_OPTIONS})
    dispersion: Literal["binomial", "fitted"] = Field(
        "binomial", description="Threshold intervals from binomial refits, or (fitted) from "
        "refits as dispersed as the fit's lack of fit (φ) says.",
        json_schema_extra={"panel": OWN_OPTIONS})
