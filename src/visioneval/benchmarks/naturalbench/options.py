"""NaturalBench's options: `visioneval naturalbench`'s flags, run.json's `options` and the
Python API's, one model (docs/naturalbench.md explains them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from visioneval.benchmarks.naturalbench.spec import (
    FAMILIES,
    FAMILY,
    HARNESSES,
    HF_REPO,
    PROTOCOLS,
)
from visioneval.core.benchmark import OWN_OPTIONS, LocalPath
from visioneval.harness.corrections import LabelSet, label_sets

Protocol = Literal["paper", "lmms-eval", "vlmevalkit", "harnesses", "all"]


class NaturalBenchOptions(BaseModel, frozen=True):
    """One line of help each."""
    data_dir: LocalPath | None = Field(None, description="Dataset folder (the Hub's layout).",
                                       json_schema_extra={"shown_default": f"download {HF_REPO}"})
    num_samples: int | None = Field(None, ge=1, description="First N groups (4 questions "
                                    "each).", json_schema_extra={"flags": ["--samples"],
                                                                 "shown_default": "all"})
    protocol: Protocol = Field("all", description="Scoring protocol; harnesses: lmms-eval and "
                               "VLMEvalKit; all: the three side by side.",
                               json_schema_extra={"panel": OWN_OPTIONS})
    labels: LabelSet = Field("both", description="original: the fixed layout every "
                             "implementation scores; corrected: the answer columns.",
                             json_schema_extra={"panel": OWN_OPTIONS})

    @property
    def protocols(self) -> list[str]:
        if self.protocol == "all":
            return list(PROTOCOLS)
        return list(HARNESSES) if self.protocol == "harnesses" else [self.protocol]

    @property
    def families(self) -> list[str]:
        """The prompts to send: one request per prompt serves every protocol that sends it."""
        wanted = {FAMILY[p] for p in self.protocols}
        return [f for f in FAMILIES if f in wanted]

    @property
    def label_sets(self) -> list[str]:
        return label_sets(self.labels)


class NaturalBenchSynthOptions(BaseModel, frozen=True):
    """`visioneval data synth-naturalbench`'s own flag (docs/naturalbench.md)."""

    layout_breaks: int = Field(0, ge=0, description="Groups whose images are swapped, so "
                               "their answer columns break the fixed layout.",
                               json_schema_extra={"metavar": "K", "panel": OWN_OPTIONS})
