"""HallusionBench's options: `visioneval hallusionbench`'s flags, run.json's `options` and the
Python API's, one model (docs/hallusionbench.md explains them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from visioneval.benchmarks.hallusionbench.spec import HF_REPO, PROTOCOLS
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
JUDGE_FIELDS = ("judge_backend", "judge_model", "vlmevalkit_judge_model", "judge_base_url",
                "judge_api_key_env")


class HallusionBenchOptions(BaseModel, frozen=True):
    """One line of help each."""
    data_dir: LocalPath | None = Field(None, description="Dataset folder.",
                                       json_schema_extra={"shown_default": f"download {HF_REPO}"})
    num_samples: int | None = Field(None, ge=1, description="First N rows of each split.",
                                    json_schema_extra={"flags": ["--samples"],
                                                       "shown_default": "all"})
    protocol: Protocol = Field("all", description="Scoring protocol; all: the three side by "
                               "side.", json_schema_extra={"panel": OWN_OPTIONS})
    labels: LabelSet = Field("both", description="Published labels, corrected ones, or both.",
                             json_schema_extra={"panel": OWN_OPTIONS})
    judge_backend: JudgeBackend | None = judge_backend_field()
    judge_model: str | None = Field(None, description="The paper's grader (GPT-4 there).",
                                    json_schema_extra={"panel": JUDGE_OPTIONS,
                                                       "metavar": "NAME"})
    vlmevalkit_judge_model: str | None = Field(
        None, description="VLMEvalKit's Yes/No matcher (gpt-4o-mini there).",
        json_schema_extra={"panel": JUDGE_OPTIONS, "metavar": "NAME"})
    judge_base_url: str | None = judge_base_url_field("judges'")
    judge_api_key_env: str | None = judge_api_key_env_field("judges'")

    @model_validator(mode="after")
    def _judges_need_a_backend(self) -> HallusionBenchOptions:
        models = self.judge_model is not None or self.vlmevalkit_judge_model is not None
        if not models:
            given = [n for n in JUDGE_FIELDS if getattr(self, n) is not None]
            if given:
                raise ValueError(f"--{given[0].replace('_', '-')} is for a judge model: give "
                                 "--judge-model or --vlmevalkit-judge-model")
            return self
        if self.judge_backend is None:
            raise ValueError("a judge model needs --judge-backend")
        refuse_credentials(self.judge_base_url)
        return self

    @property
    def protocols(self) -> list[str]:
        return list(PROTOCOLS) if self.protocol == "all" else [self.protocol]

    @property
    def label_sets(self) -> list[str]:
        """The label sets scored: one, or both (the published labels first)."""
        return label_sets(self.labels)

    @property
    def asks_text_only(self) -> bool:
        """Only the paper asks the questions that come without a figure."""
        return "paper" in self.protocols
