"""The options every paradigm's command has: `visioneval NAME`'s flags, run.json's
`options` and the Python API's, one model (light: read when the command line starts)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from visioneval.core.benchmark import OWN_OPTIONS, LocalPath


class ParadigmOptions(BaseModel, frozen=True):
    """One line of help each (docs/paradigms.md explains them)."""

    data: LocalPath = Field(description="Folder made by `visioneval data synth-NAME`.")
    conditions: list[str] | None = Field(
        None, description="Curves to run (names as in the data's folders).",
        json_schema_extra={"shown_default": "all in the data"})
    num_samples: int | None = Field(None, ge=1, description="First N rows of each "
                                    "condition.",
                                    json_schema_extra={"flags": ["--samples"],
                                                       "shown_default": "all"})
    bootstrap: int = Field(1000, ge=0, description="Bootstrap draws per figure: "
                           "parametric refits of a fit, resampled trials of an estimate "
                           "(0: no intervals).", json_schema_extra={"panel": OWN_OPTIONS})
    seed: int = Field(0, description="Seed of the bootstrap.",
                      json_schema_extra={"panel": OWN_OPTIONS})
