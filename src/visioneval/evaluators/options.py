"""`visioneval evaluate`'s options as run.json records them; its command is generated from
this model (each field a flag, the case file its argument) and the definition's
`command_line` (evaluators/commandline.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from visioneval.backends.registry import BackendKind, BackendSpec
from visioneval.core.benchmark import JUDGE_OPTIONS, OWN_OPTIONS
from visioneval.core.records import GenerationSettings

Control = Literal["blind", "order", "probes"]
"""Checks of the judges themselves (`--judge-controls`): the same judge request without its
images, with its images in the other order, and with the candidate's output edited."""
CONTROLS: tuple[Control, ...] = ("blind", "order", "probes")

PanelScore = Literal["mean", "median"]


class PanelJudge(BaseModel, frozen=True):
    """A judge beside the run's own model (judge 2, 3 ...): where it is and which variable
    holds its key (never the key)."""

    kind: BackendKind
    model: str
    base_url: str | None = None
    api_key_env: str | None = None

    def spec(self) -> BackendSpec:
        return BackendSpec(kind=self.kind, model=self.model, base_url=self.base_url,
                           api_key_env=self.api_key_env)


class EvaluateOptions(BaseModel, frozen=True):
    cases: str = Field(description="YAML or JSONL file of eval cases.")
    judge_samples: int = Field(1, ge=1, description="Judge calls per case (mean and spread "
                               "per dimension).", json_schema_extra={"panel": JUDGE_OPTIONS})
    # None: 0 for one sample, 0.7 for several
    judge_temperature: float | None = Field(None, description="Sampling temperature.",
                                            json_schema_extra={
                                                "panel": JUDGE_OPTIONS, "metavar": "NUM",
                                                "shown_default": "0; 0.7 for several samples"})
    judge_max_tokens: int = Field(1024, gt=0, description="Most tokens a verdict may have.",
                                  json_schema_extra={"panel": JUDGE_OPTIONS})
    judge_text_only: bool = Field(False, description="The judge is text-only: cases it must "
                                  "see are refused.", json_schema_extra={"panel": JUDGE_OPTIONS})
    validator_timeout_s: float = Field(30.0, gt=0, description="Seconds per validator run "
                                       "(a case's `timeout` wins).", json_schema_extra={
                                           "flag": "--validator-timeout", "metavar": "S",
                                           "shown_default": "30", "panel": OWN_OPTIONS})
    # `script:` evaluators run commands named by the case file
    allow_scripts: bool = Field(False, description="Run the case file's `script:` evaluators "
                                "(trusted files).", json_schema_extra={"panel": OWN_OPTIONS})
    allow_outside_images: bool = Field(False, description="Send case images from outside the "
                                       "case file's folder.",
                                       json_schema_extra={"panel": OWN_OPTIONS})
    judge_controls: tuple[Control, ...] = Field((), description="Check the judges: blind, "
                                                "order, probes (comma list) or all.",
                                                json_schema_extra={"panel": JUDGE_OPTIONS,
                                                                   "metavar": "LIST"})
    panel: tuple[PanelJudge, ...] = ()  # judges 2, 3 ...: the run's own model is judge 1
    # with several judges: a case's score over them
    panel_score: PanelScore = Field("mean", description="A case's score from several judges: "
                                    "mean or median.", json_schema_extra={
                                        "panel": JUDGE_OPTIONS, "metavar": "HOW"})
    # a file of people's scores: the judges' reference
    human_labels: str | None = Field(None, description="People's scores (CSV or JSONL): each "
                                     "judge's agreement.", json_schema_extra={
                                         "panel": JUDGE_OPTIONS, "metavar": "FILE"})

    @field_validator("cases", "human_labels")
    @classmethod
    def _resolved(cls, value: str | None) -> str | None:
        """As run.json keeps them: a resume from another folder reads the same files."""
        return None if value is None else str(Path(value).resolve())

    @field_validator("judge_controls", mode="before")
    @classmethod
    def _controls(cls, value: Any) -> Any:
        """`blind,order` (or `all` for every one), in a fixed order; an unknown one is
        named with the controls there are."""
        if isinstance(value, str):
            value = value.split(",")
        if not isinstance(value, list | tuple):
            return value
        named = {str(v).strip() for v in value if str(v).strip()}
        if "all" in named:
            named = set(CONTROLS) | (named - {"all"})
        unknown = sorted(named - set(CONTROLS))
        if unknown:
            raise ValueError(f"no control {', '.join(unknown)}; the controls are "
                             f"{', '.join(CONTROLS)} (or all)")
        return tuple(c for c in CONTROLS if c in named)

    def judge_settings(self) -> GenerationSettings:
        temperature = self.judge_temperature
        if temperature is None:
            temperature = 0.0 if self.judge_samples == 1 else 0.7
        return GenerationSettings(temperature=temperature, max_tokens=self.judge_max_tokens)

    @property
    def judges(self) -> int:
        """How many judges grade each case: the run's model and the panel."""
        return 1 + len(self.panel)
