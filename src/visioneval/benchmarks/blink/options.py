"""BLINK's options: `visioneval blink`'s flags, run.json's `options` and the Python API's
(docs/blink.md explains them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from visioneval.benchmarks.blink.spec import HF_REPO, PROTOCOLS, TASKS
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


class BlinkOptions(BaseModel, frozen=True):
    """One line of help each."""

    data_dir: LocalPath | None = Field(None, description="Dataset folder (BLINK's Hub layout: "
                                       "<Task>/val-*.parquet).",
                                       json_schema_extra={"shown_default": f"download {HF_REPO}"})
    tasks: str | None = Field(None, description="Comma-separated tasks (configs), e.g. "
                              "Counting,IQ_Test.",
                              json_schema_extra={"shown_default": "all 14"})
    split: Literal["val", "test"] = Field("val", description="val (answers public); test's "
                                          "answers are hidden.")
    limit: int | None = Field(None, ge=1, description="First N questions of each task.",
                              json_schema_extra={"shown_default": "all"})
    protocol: Protocol = Field("all", description="Scoring protocol; all: the three side by "
                               "side.", json_schema_extra={"panel": OWN_OPTIONS})
    labels: LabelSet = Field("both", description="Labels: original, corrected "
                             "(corrections.json), or both side by side.",
                             json_schema_extra={"panel": OWN_OPTIONS})

    judge_backend: JudgeBackend | None = judge_backend_field()
    judge_model: str | None = Field(None, description="Reads what the paper's and "
                                    "VLMEvalKit's rules leave, as their GPT-3.5 and "
                                    "gpt-4o-mini did.",
                                    json_schema_extra={"panel": JUDGE_OPTIONS,
                                                       "metavar": "NAME",
                                                       "shown_default": "none: rules only"})
    judge_base_url: str | None = judge_base_url_field()
    judge_api_key_env: str | None = judge_api_key_env_field()

    @model_validator(mode="after")
    def _judge_named_whole(self) -> BlinkOptions:
        given = [n for n in JUDGE_FIELDS if getattr(self, n) is not None]
        if given and (self.judge_backend is None or self.judge_model is None):
            raise ValueError("a judge needs --judge-backend and --judge-model")
        if given and self.protocol == "lmms-eval":
            raise ValueError("the judge reads the paper's and VLMEvalKit's answers: "
                             "--protocol paper, vlmevalkit or all")
        refuse_credentials(self.judge_base_url)
        return self

    @field_validator("split")
    @classmethod
    def _val_only(cls, split: str) -> str:
        if split == "test":
            raise ValueError("BLINK's test answers are hidden (the authors score them on "
                             "EvalAI, challenge 2287): use --split val")
        return split

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, tasks: str | None) -> str | None:
        if tasks is None:
            return None
        names = [t.strip() for t in tasks.split(",") if t.strip()]
        unknown = [t for t in names if t not in TASKS]
        if unknown or not names:
            raise ValueError(f"unknown task {', '.join(unknown) or repr(tasks)}; BLINK's: "
                             f"{', '.join(TASKS)}")
        return ",".join(names)

    @property
    def task_list(self) -> list[str]:
        if self.tasks is None:
            return list(TASKS)
        chosen = set(self.tasks.split(","))
        return [t for t in TASKS if t in chosen]

    @property
    def protocols(self) -> list[str]:
        return list(PROTOCOLS) if self.protocol == "all" else [self.protocol]

    @property
    def label_sets(self) -> list[str]:
        return label_sets(self.labels)


JUDGE_FIELDS = ("judge_backend", "judge_model", "judge_base_url", "judge_api_key_env")
