"""POPE's options: `visioneval pope`'s flags, run.json's `options` and the Python API's
(docs/pope.md explains them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from visioneval.benchmarks.pope.spec import FAMILIES, FAMILY, HF_REPO, PROTOCOLS, SETTINGS
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


def choose_settings(values: list[str] | None) -> list[str]:
    """`--settings` checked and put in the paper's order (all three when None)."""
    if values is None:
        return list(SETTINGS)
    chosen = {v.strip().lower() for v in values}
    bad = sorted(chosen - set(SETTINGS))
    if bad or not chosen:
        raise ValueError(f"unknown setting {', '.join(bad) or '(none)'}; choose from "
                         f"{', '.join(SETTINGS)}")
    return [s for s in SETTINGS if s in chosen]


class PopeOptions(BaseModel, frozen=True):
    """One line of help each."""
    data_dir: LocalPath | None = Field(None, description="Dataset folder (the Hub's layout).",
                                       json_schema_extra={"shown_default": f"download {HF_REPO}"})
    # None (the flag's default: not given) is every setting once validated.
    settings: list[str] = Field(None, validate_default=True,
                                description="random, popular, adversarial.",
                                json_schema_extra={"shown_default": ",".join(SETTINGS)})
    num_samples: int | None = Field(None, ge=1, description="First N questions per setting "
                                    "(6 per image).",
                                    json_schema_extra={"flags": ["--samples"],
                                                       "shown_default": "all"})
    protocol: Protocol = Field("all", description="Scoring protocol; all: the three side by "
                               "side.", json_schema_extra={"panel": OWN_OPTIONS})
    labels: LabelSet = Field("both", description="original, corrected (RePOPE) or both.",
                             json_schema_extra={"panel": OWN_OPTIONS})

    judge_backend: JudgeBackend | None = judge_backend_field(
        "VLMEvalKit's judge: openai, openrouter, ollama or anthropic.")
    judge_model: str | None = Field(None, description="Reads what VLMEvalKit's rules cannot "
                                    "(VLMEvalKit: gpt-4o-mini).",
                                    json_schema_extra={"panel": JUDGE_OPTIONS,
                                                       "metavar": "NAME"})
    judge_base_url: str | None = judge_base_url_field()
    judge_api_key_env: str | None = judge_api_key_env_field()

    @field_validator("settings", mode="before")
    @classmethod
    def _known(cls, value: list[str] | None, info: ValidationInfo) -> list[str]:
        return choose_settings(value)

    @model_validator(mode="after")
    def _judge_is_vlmevalkits(self) -> PopeOptions:
        given = [n for n in JUDGE_FIELDS if getattr(self, n) is not None]
        if not given:
            return self
        if self.judge_backend is None or self.judge_model is None:
            raise ValueError("the judge step needs --judge-backend and --judge-model")
        if "vlmevalkit" not in self.protocols:
            raise ValueError(f"--{given[0].replace('_', '-')} is VLMEvalKit's judge step: "
                             "give --protocol vlmevalkit or all")
        refuse_credentials(self.judge_base_url)
        return self

    @property
    def protocols(self) -> list[str]:
        return list(PROTOCOLS) if self.protocol == "all" else [self.protocol]

    @property
    def families(self) -> list[str]:
        """Prompts to send: one request per prompt serves every protocol that sends it."""
        wanted = {FAMILY[p] for p in self.protocols}
        return [f for f in FAMILIES if f in wanted]

    @property
    def label_sets(self) -> list[str]:
        return label_sets(self.labels)


JUDGE_FIELDS = ("judge_backend", "judge_model", "judge_base_url", "judge_api_key_env")
