"""The typed records that flow through one evaluation: Sample -> Request -> Response -> Record."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
from pydantic import BaseModel, Field

from visioneval.core.bounds import INT_RANGE
from visioneval.core.person import PersonAnswer
from visioneval.io.images import Image

MAX_TOP_LOGPROBS = 20  # OpenAI's limit on `top_logprobs`

Part = str | Image
"""A prompt part: text or an image, kept in the order the model should see them."""


@dataclass(frozen=True, slots=True)
class Message:
    role: Literal["system", "user", "assistant"]
    parts: tuple[Part, ...]

    def text(self) -> str:
        return "\n".join(p for p in self.parts if isinstance(p, str))

    def images(self) -> list[Image]:
        return [p for p in self.parts if isinstance(p, Image)]


def user(*parts: Part) -> Message:
    return Message("user", tuple(parts))


class GenerationSettings(BaseModel, frozen=True, allow_inf_nan=False):
    """Sampling settings, explicit and recorded (defaults follow the lmms-eval SalBench task):
    finite numbers and 64-bit counts, as run.json records them."""

    temperature: float = 0.0
    max_tokens: int = Field(128, gt=0, le=INT_RANGE[1])
    seed: int | None = Field(None, ge=INT_RANGE[0], le=INT_RANGE[1])
    # `--score expected`: the answer's first token's most likely alternatives, with their
    # log-probabilities (OpenAI's `top_logprobs`, at most 20); left out of the JSON when
    # None, so the cache keys and run.json of every other run stay as they were.
    top_logprobs: int | None = Field(None, ge=1, le=MAX_TOP_LOGPROBS,
                                     exclude_if=lambda v: v is None)

    def for_epoch(self, epoch: int) -> GenerationSettings:
        """The settings of an item's `epoch`-th answer (`--epochs`): the first is asked as
        given; each later one with its own seed (the given seed, or 0, plus epoch - 1), so
        it is a distinct request with a cache entry of its own, and a server that takes a
        seed samples it anew."""
        if epoch <= 1:
            return self
        return _epoch_settings(self, epoch)


@dataclass(frozen=True, slots=True)
class Request:
    messages: tuple[Message, ...]
    settings: GenerationSettings

    def fingerprint(self) -> dict[str, Any]:
        """A JSON-able identity of the request: images stand in by their sha256."""
        return {
            "messages": [
                {"role": m.role,
                 "parts": [p if isinstance(p, str) else {"image": p.sha256} for p in m.parts]}
                for m in self.messages
            ],
            "settings": _settings_dict(self.settings),
        }


@functools.lru_cache(maxsize=64)
def _settings_dict(settings: GenerationSettings) -> dict[str, Any]:
    """Settings are frozen and shared by a whole run: dump them once, not per request."""
    return settings.model_dump()


@functools.lru_cache(maxsize=256)
def _epoch_settings(settings: GenerationSettings, epoch: int) -> GenerationSettings:
    """A run's settings for one epoch, made once: every sample of the epoch shares them."""
    return settings.model_copy(update={"seed": (settings.seed or 0) + epoch - 1})


def stable_hash(obj: Any) -> str:
    """sha256 of canonical JSON: the cache key and dataset fingerprints use it."""
    return hashlib.sha256(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)).hexdigest()


class Response(BaseModel):
    """What a backend returned for one request: text, or an error, never both. A sample no
    model answers (a code validator) has `source="code"`: no text, an error only if the
    check could not run, its outcome in the record's `parsed`."""

    text: str | None = None
    error: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # What the provider says the request cost (OpenRouter's usage.cost), in US dollars; left
    # out of the JSON when None, so records of servers that say nothing stay as they were.
    cost_usd: float | None = Field(None, exclude_if=lambda v: v is None)
    # A reasoning model's thinking, set aside before `text` (the answer) is parsed; left out
    # of the JSON when None, so records and cache entries of other models stay as they were.
    reasoning: str | None = Field(None, exclude_if=lambda v: v is None)
    # With `--score expected`: the answer's first token's alternatives as the server gave
    # them (token -> log-probability, at most MAX_TOP_LOGPROBS); left out when None.
    first_token_logprobs: dict[str, float] | None = Field(None, exclude_if=lambda v: v is None)
    latency_s: float = 0.0
    attempts: int = 1
    cached: bool = False
    # The run directory whose answer a cache hit replays; left out of the JSON when None.
    cached_from: str | None = Field(None, exclude_if=lambda v: v is None)
    # Left out of the JSON when "model": model records and cache entries stay as they were.
    source: Literal["model", "code"] = Field("model", exclude_if=lambda v: v == "model")
    # A person's answer (`--backend human`): response time and display; left out when None.
    person: PersonAnswer | None = Field(None, exclude_if=lambda v: v is None)

    @property
    def ok(self) -> bool:
        return self.error is None and (self.text is not None or self.source == "code")


@dataclass(slots=True)
class Sample:
    """One unit of work: the prompt to send, the target to score, labels for grouping."""

    id: str
    group: str
    messages: tuple[Message, ...]
    target: Any
    metadata: dict[str, Any] = field(default_factory=dict)
    epoch: int = 1
    """Which answer to the same prompt this is (`--epochs`): its request's settings are
    `GenerationSettings.for_epoch(epoch)`."""

    def prompt_summary(self) -> list[dict[str, Any]]:
        """The prompt as a record keeps it: text verbatim, images by description."""
        return [
            {"role": m.role,
             "parts": [p if isinstance(p, str) else {"image": p.describe()} for p in m.parts]}
            for m in self.messages
        ]


@dataclass(frozen=True, slots=True)
class SkippedRow:
    """A dataset row that could not become a sample (bad column, image or label)."""

    group: str
    row: str
    reason: str
    samples: int = 1  # samples the row would have made: the progress bar counts them as done

    def line(self) -> str:
        return f"skipped {self.group} row {self.row}: {self.reason}"


class Record(BaseModel):
    """One finished sample as written to samples.jsonl; metrics are recomputed from these."""

    id: str
    group: str
    target: Any
    response: Response
    parsed: dict[str, Any] = Field(default_factory=dict)
    scores: dict[str, dict[str, float]] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    prompt: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.response.ok
