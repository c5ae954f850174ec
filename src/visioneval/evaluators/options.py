"""`visioneval evaluate`'s options as run.json records them (its command is its own,
evaluators/command.py, and builds this model)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from visioneval.core.records import GenerationSettings


class EvaluateOptions(BaseModel, frozen=True):
    cases: str
    judge_samples: int = Field(1, ge=1)
    judge_temperature: float | None = None  # None: 0 for one sample, 0.7 for several
    judge_max_tokens: int = Field(1024, gt=0)
    judge_text_only: bool = False
    validator_timeout_s: float = Field(30.0, gt=0)
    allow_scripts: bool = False  # `script:` evaluators run commands named by the case file
    allow_outside_images: bool = False  # images outside the case file's folder

    def judge_settings(self) -> GenerationSettings:
        temperature = self.judge_temperature
        if temperature is None:
            temperature = 0.0 if self.judge_samples == 1 else 0.7
        return GenerationSettings(temperature=temperature, max_tokens=self.judge_max_tokens)
