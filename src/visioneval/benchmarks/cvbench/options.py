"""CV-Bench's options: `visioneval cvbench`'s flags, run.json's `options` and the Python
API's (docs/cvbench.md explains them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from visioneval.benchmarks.cvbench.spec import HF_REPO, PROTOCOLS
from visioneval.core.benchmark import OWN_OPTIONS, LocalPath
from visioneval.harness.corrections import LabelSet, label_sets

Protocol = Literal["paper", "lmms-eval", "vlmevalkit", "harnesses", "all"]


class CvBenchOptions(BaseModel, frozen=True):
    """One line of help each."""
    data_dir: LocalPath | None = Field(None, description="Dataset folder (the Hub's layout).",
                                       json_schema_extra={"shown_default": f"download {HF_REPO}"})
    num_samples: int | None = Field(None, ge=1, description="First N items.",
                                    json_schema_extra={"flags": ["--samples"],
                                                       "shown_default": "all"})
    protocol: Protocol = Field("all", description="Scoring protocol; harnesses: lmms-eval and "
                               "VLMEvalKit; all: the three side by side.",
                               json_schema_extra={"panel": OWN_OPTIONS})
    labels: LabelSet = Field("both", description="original: the published answers; "
                             "corrected: with corrections.json applied.",
                             json_schema_extra={"panel": OWN_OPTIONS})

    @property
    def protocols(self) -> list[str]:
        if self.protocol == "all":
            return list(PROTOCOLS)
        return list(PROTOCOLS[1:]) if self.protocol == "harnesses" else [self.protocol]

    @property
    def label_sets(self) -> list[str]:
        return label_sets(self.labels)
