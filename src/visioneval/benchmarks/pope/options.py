"""POPE's options: `visioneval pope`'s flags, run.json's `options` and the Python API's
(docs/pope.md explains them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from visioneval.benchmarks.pope.spec import FAMILIES, FAMILY, HF_REPO, PROTOCOLS, SETTINGS
from visioneval.core.benchmark import OWN_OPTIONS, LocalPath

Protocol = Literal["paper", "lmms-eval", "vlmevalkit", "all"]
# visioneval.harness.corrections.LabelSet, spelled here: the command line reads this module
# when it starts, and the manifest reader loads pyarrow.
LabelSet = Literal["original", "corrected", "both"]


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

    @field_validator("settings", mode="before")
    @classmethod
    def _known(cls, value: list[str] | None, info: ValidationInfo) -> list[str]:
        return choose_settings(value)

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
        return ["original", "corrected"] if self.labels == "both" else [self.labels]
