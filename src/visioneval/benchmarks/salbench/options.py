"""SalBench's options: `visioneval salbench`'s flags, run.json's `options` and the Python
API's, one model. `--splits`/`--tasks` are a way to name configs: they are folded into
`configs`, which is what run.json records."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from visioneval.benchmarks.salbench.prompts import prompt_families
from visioneval.benchmarks.salbench.spec import HF_REPO, SPLITS, TASKS, select_configs
from visioneval.core.benchmark import OWN_OPTIONS, LocalPath


class SalBenchOptions(BaseModel, frozen=True):
    """One line of help each (docs/salbench.md explains them)."""
    data_dir: LocalPath | None = Field(None, description="Dataset folder.",
                                       json_schema_extra={"shown_default": f"download {HF_REPO}"})
    splits: list[str] | None = Field(None, exclude=True,
                                     description="synthetic (P3), natural (O3).",
                                     json_schema_extra={"shown_default": ",".join(SPLITS),
                                                        "recorded_as": "configs"})
    tasks: list[str] | None = Field(None, exclude=True, description="Detection D, Referring R, "
                                    "Visual Referring VR.",
                                    json_schema_extra={"shown_default": ",".join(TASKS),
                                                       "recorded_as": "configs"})
    # Always set once validated (`_configs_named`); None only as the flag's default.
    configs: list[str] = Field(None, validate_default=True,
                               description="HF configs, e.g. P3,O3_box (instead of "
                               "--splits/--tasks).")
    num_samples: int | None = Field(None, ge=1, description="First N rows of each config.",
                                    json_schema_extra={"flags": ["--samples"],
                                                       "shown_default": "all"})
    shots: Literal[0, 3, 5] = Field(0, description="In-context examples.",
                                    json_schema_extra={"flags": ["--num-shots"],
                                                       "panel": OWN_OPTIONS})
    prompt: Literal["paper", "lmms-eval", "both"] = Field(
        "paper", description="paper: as is; lmms-eval: its suffix added; both.",
        json_schema_extra={"panel": OWN_OPTIONS})
    seed: int = Field(0, description="Seed of few-shot examples and random baseline.",
                      json_schema_extra={"panel": OWN_OPTIONS})

    @model_validator(mode="before")
    @classmethod
    def _configs_named(cls, data: Any) -> Any:
        """`configs` checked, or made from --splits and --tasks (all of both by default)."""
        if isinstance(data, dict):
            named = data.get("configs") or None
            chosen = select_configs(named, data.get("splits"), data.get("tasks"))
            data = {**data, "configs": [c.name for c in chosen]}
            if named is None:
                data["splits"] = data.get("splits") or list(SPLITS)
        return data

    @property
    def families(self) -> tuple[str, ...]:
        """Prompt styles sent for every row, the headline first."""
        return prompt_families(self.prompt)

    @property
    def named_configs(self) -> bool:
        """Whether the configs were named (--configs, or run.json) rather than made from
        --splits/--tasks."""
        return self.splits is None


class SalBenchSynthOptions(BaseModel, frozen=True):
    """`visioneval data synth-salbench`'s own flags (docs/salbench.md, "Target-absent
    controls")."""

    target_absent: int = Field(0, ge=0, description="Target-absent control scenes (every "
                               "object alike, answer None) added to the Detection config.",
                               json_schema_extra={"metavar": "K", "panel": OWN_OPTIONS})
