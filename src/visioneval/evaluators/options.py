"""`visioneval evaluate`'s options as run.json records them (its command is its own,
evaluators/command.py, and builds this model)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from visioneval.backends.registry import BackendKind, BackendSpec
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
    cases: str
    judge_samples: int = Field(1, ge=1)
    judge_temperature: float | None = None  # None: 0 for one sample, 0.7 for several
    judge_max_tokens: int = Field(1024, gt=0)
    judge_text_only: bool = False
    validator_timeout_s: float = Field(30.0, gt=0)
    allow_scripts: bool = False  # `script:` evaluators run commands named by the case file
    allow_outside_images: bool = False  # images outside the case file's folder
    judge_controls: tuple[Control, ...] = ()
    panel: tuple[PanelJudge, ...] = ()  # judges 2, 3 ...: the run's own model is judge 1
    panel_score: PanelScore = "mean"  # with several judges: a case's score over them
    human_labels: str | None = None  # a file of people's scores: the judges' reference

    def judge_settings(self) -> GenerationSettings:
        temperature = self.judge_temperature
        if temperature is None:
            temperature = 0.0 if self.judge_samples == 1 else 0.7
        return GenerationSettings(temperature=temperature, max_tokens=self.judge_max_tokens)

    @property
    def judges(self) -> int:
        """How many judges grade each case: the run's model and the panel."""
        return 1 + len(self.panel)
