"""CV-Bench's options: `visioneval cvbench`'s flags, run.json's `options` and the Python
API's (docs/cvbench.md explains them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from visioneval.benchmarks.cvbench.spec import HF_REPO, PROTOCOLS
from visioneval.core.benchmark import JUDGE_OPTIONS, OWN_OPTIONS, LocalPath
from visioneval.core.option_checks import (
    JudgeBackend,
    judge_api_key_env_field,
    judge_backend_field,
    judge_base_url_field,
    refuse_credentials,
)
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

    judge_backend: JudgeBackend | None = judge_backend_field(
        "VLMEvalKit's judge: openai, openrouter, ollama or anthropic.")
    judge_model: str | None = Field(None, description="Reads what VLMEvalKit's rules leave, "
                                    "as its gpt-4o-mini did.",
                                    json_schema_extra={"panel": JUDGE_OPTIONS,
                                                       "metavar": "NAME",
                                                       "shown_default": "none: rules only"})
    judge_base_url: str | None = judge_base_url_field()
    judge_api_key_env: str | None = judge_api_key_env_field()

    @model_validator(mode="after")
    def _judge_named_whole(self) -> CvBenchOptions:
        given = [n for n in JUDGE_FIELDS if getattr(self, n) is not None]
        if given and (self.judge_backend is None or self.judge_model is None):
            raise ValueError("a judge needs --judge-backend and --judge-model")
        if given and "vlmevalkit" not in self.protocols:
            raise ValueError("the judge reads VLMEvalKit's answers: --protocol vlmevalkit, "
                             "harnesses or all")
        refuse_credentials(self.judge_base_url)
        return self

    @property
    def protocols(self) -> list[str]:
        if self.protocol == "all":
            return list(PROTOCOLS)
        return list(PROTOCOLS[1:]) if self.protocol == "harnesses" else [self.protocol]

    @property
    def label_sets(self) -> list[str]:
        return label_sets(self.labels)


JUDGE_FIELDS = ("judge_backend", "judge_model", "judge_base_url", "judge_api_key_env")
