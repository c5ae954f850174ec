"""IllusionBench's options: `visioneval illusionbench`'s flags, run.json's `options` and the
Python API's, one model (docs/illusionbench.md explains them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from visioneval.benchmarks.illusionbench.spec import FAMILY, HF_REPO, PROTOCOLS, SUBSETS, TASKS
from visioneval.core.benchmark import OWN_OPTIONS, LocalPath

Protocol = Literal["original", "lmms-strict", "lmms-recall", "all"]


def choose(option: str, values: list[str] | None) -> list[str]:
    """`--subsets` or `--tasks` checked and put in canonical order (all when None)."""
    known = SUBSETS if option == "subsets" else TASKS
    if values is None:
        return list(known)
    chosen = {v.upper() if option == "subsets" else v.lower() for v in values}
    bad = sorted(chosen - set(known))
    if bad or not chosen:
        raise ValueError(f"unknown {', '.join(bad) or '(none)'}; choose from {', '.join(known)}")
    return [k for k in known if k in chosen]


class IllusionBenchOptions(BaseModel, frozen=True):
    """One line of help each."""
    data_dir: LocalPath | None = Field(None, description="Dataset folder.",
                                       json_schema_extra={"shown_default": f"download {HF_REPO}"})
    # None (the flags' default: not given) is every subset or task once validated.
    subsets: list[str] = Field(None, validate_default=True,
                               description="ICON, LOGO, IN.",
                               json_schema_extra={"shown_default": ",".join(SUBSETS)})
    tasks: list[str] = Field(None, validate_default=True,
                             description="shape, scene.",
                             json_schema_extra={"shown_default": ",".join(TASKS)})
    num_samples: int | None = Field(None, ge=1, description="First N rows per subset (or "
                                    "drawn: --sample-seed).",
                                    json_schema_extra={"flags": ["--samples"],
                                                       "shown_default": "all"})
    sample_seed: int | None = Field(None, description="Draw --samples rows at random "
                                    "(stratified) with this seed.")
    protocol: Protocol = Field("all", description="Scoring protocol; all: the three side by "
                               "side.", json_schema_extra={"panel": OWN_OPTIONS})
    fix_quirks: bool = Field(False, description="Report the original rule with its spelling "
                             "quirks fixed.", json_schema_extra={"panel": OWN_OPTIONS})

    @field_validator("subsets", "tasks", mode="before")
    @classmethod
    def _known(cls, value: list[str] | None, info: ValidationInfo) -> list[str]:
        return choose(info.field_name or "", value)

    @model_validator(mode="after")
    def _seed_needs_n(self) -> IllusionBenchOptions:
        if self.sample_seed is not None and self.num_samples is None:
            raise ValueError("--sample-seed draws --num-samples rows per subset; give both")
        return self

    @property
    def protocols(self) -> list[str]:
        return list(PROTOCOLS) if self.protocol == "all" else [self.protocol]

    @property
    def families(self) -> list[str]:
        """Prompt families to request: one request serves every protocol of its family."""
        wanted = {FAMILY[p] for p in self.protocols}
        return [f for f in ("original", "lmms") if f in wanted]
