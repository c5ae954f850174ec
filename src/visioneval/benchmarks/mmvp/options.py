"""MMVP's options: `visioneval mmvp`'s flags, run.json's `options` and the Python API's, one
model (docs/mmvp.md explains them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from visioneval.benchmarks.mmvp.spec import HF_REPO, PAIRS, PROTOCOLS
from visioneval.core.benchmark import JUDGE_OPTIONS, OWN_OPTIONS, LocalPath
from visioneval.core.option_checks import (
    JudgeBackend,
    judge_api_key_env_field,
    judge_backend_field,
    judge_base_url_field,
    refuse_credentials,
)
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

    judge_backend: JudgeBackend | None = judge_backend_field()
    judge_model: str | None = Field(None, description="Grades the paper's answers as its "
                                    "GPT-4-0314 grader did; reads those VLMEvalKit's rules "
                                    "leave, as its gpt-4o-mini did.",
                                    json_schema_extra={"panel": JUDGE_OPTIONS,
                                                       "metavar": "NAME",
                                                       "shown_default": "none: rules only"})
    judge_base_url: str | None = judge_base_url_field()
    judge_api_key_env: str | None = judge_api_key_env_field()

    @model_validator(mode="after")
    def _judge_named_whole(self) -> MmvpOptions:
        given = [n for n in JUDGE_FIELDS if getattr(self, n) is not None]
        if given and (self.judge_backend is None or self.judge_model is None):
            raise ValueError("a judge needs --judge-backend and --judge-model")
        refuse_credentials(self.judge_base_url)
        return self

    @property
    def protocols(self) -> list[str]:
        return list(PROTOCOLS) if self.protocol == "all" else [self.protocol]

    @property
    def label_sets(self) -> list[str]:
        return label_sets(self.labels)


JUDGE_FIELDS = ("judge_backend", "judge_model", "judge_base_url", "judge_api_key_env")


class SynthOptions(BaseModel, frozen=True):
    """`visioneval data synth-mmvp`'s own flag."""

    layout: Layout = Field("MMVP/MMVP", description="MMVP/MMVP (Questions.csv and images) "
                           "or lmms-lab-eval/MMVP (parquet, lmms-eval's labels).")
