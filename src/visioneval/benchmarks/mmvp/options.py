"""MMVP's options: `visioneval mmvp`'s flags, run.json's `options` and the Python API's, one
model (docs/mmvp.md explains them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from visioneval.benchmarks.mmvp.spec import HF_REPO, PAIRS, PROTOCOLS
from visioneval.core.benchmark import OWN_OPTIONS, LocalPath
from visioneval.harness.corrections import LabelSet, label_sets

Protocol = Literal["paper", "lmms-eval", "vlmevalkit", "all"]
Layout = Literal["MMVP/MMVP", "lmms-lab-eval/MMVP"]


class MmvpOptions(BaseModel, frozen=True):
    """One line of help each."""

    data_dir: LocalPath | None = Field(None, description="Dataset folder (MMVP/MMVP's layout "
                                       "or lmms-lab-eval/MMVP's parquet).",
                                       json_schema_extra={"shown_default": f"download {HF_REPO}"})
    pairs: int | None = Field(None, ge=1, le=PAIRS, description="First N pairs (2N "
                                  "questions).",
                                  json_schema_extra={"shown_default": "all 150"})
    protocol: Protocol = Field("all", description="Scoring protocol; all: the three side by "
                               "side.", json_schema_extra={"panel": OWN_OPTIONS})
    labels: LabelSet = Field("both", description="Labels: original (each protocol's own), "
                             "corrected (corrections.json), or both side by side.",
                             json_schema_extra={"panel": OWN_OPTIONS})

    @property
    def protocols(self) -> list[str]:
        return list(PROTOCOLS) if self.protocol == "all" else [self.protocol]

    @property
    def label_sets(self) -> list[str]:
        return label_sets(self.labels)


class SynthOptions(BaseModel, frozen=True):
    """`visioneval data synth-mmvp`'s own flag."""

    layout: Layout = Field("MMVP/MMVP", description="MMVP/MMVP (Questions.csv and images) "
                           "or lmms-lab-eval/MMVP (parquet, lmms-eval's labels).")
