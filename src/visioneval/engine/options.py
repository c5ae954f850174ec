"""How a run is run (concurrency, retries, limits, cache, prices), and how a resume keeps it.

`EngineOptions` are the settings in force, recorded in run.json under `engine`. `EngineFlags`
are what one command line gave (None or False: not given). A new run fills what was not
given with the defaults; `--resume` fills it with what the run recorded, so a run started
with `--concurrency 2 --no-cache` resumes at 2 and without the cache, and every flag given
again is said in one line as it replaces the recorded value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from visioneval.backends.http import HttpLimits
from visioneval.backends.registry import Dispatch
from visioneval.core import defaults
from visioneval.core.engine_options import (
    MAX_INT,
    EngineOptions,
    both_prices,
    shard_cache_path,
)
from visioneval.engine.cache import default_cache_path
from visioneval.engine.retry import RetryPolicy
from visioneval.shards import Shard
from visioneval.validation import error_message

CACHE_FILE = "responses.sqlite3"


def retry_policy(options: EngineOptions) -> RetryPolicy:
    return RetryPolicy(options.max_attempts, options.timeout_s, options.backoff_base_s,
                       options.backoff_cap_s)


def dispatch(options: EngineOptions) -> Dispatch:
    """`concurrency` is per endpoint; the limits are for the model."""
    return Dispatch(options.concurrency, options.rpm, options.tpm, options.cache_key_url)


def http_limits(options: EngineOptions) -> HttpLimits:
    """What a server's reply may cost: --max-reply-mb, and --timeout for the checks before
    the run (the preflight's GETs) as for each attempt."""
    return HttpLimits(max_reply_bytes=options.max_reply_bytes,
                      preflight_timeout_s=options.timeout_s)


# Each setting's flag, for the lines a resume prints.
FLAGS = {"concurrency": "--concurrency", "max_attempts": "--max-attempts",
         "timeout_s": "--timeout", "backoff_base_s": "--backoff-base",
         "backoff_cap_s": "--backoff-cap", "rpm": "--rpm", "tpm": "--tpm",
         "cache_path": "--cache-dir/--no-cache", "refresh_cache": "--refresh-cache",
         "cache_key_url": "--cache-key-url", "price_in": "--price-in",
         "price_out": "--price-out", "judge_price_in": "--judge-price-in",
         "judge_price_out": "--judge-price-out", "max_reply_mb": "--max-reply-mb"}
_SCALARS = ("concurrency", "max_attempts", "timeout_s", "backoff_base_s", "backoff_cap_s",
            "rpm", "tpm", "price_in", "price_out", "judge_price_in", "judge_price_out",
            "max_reply_mb")


@dataclass(frozen=True)
class Change:
    """A recorded setting a resume replaced because its flag was given again."""

    setting: str
    recorded: Any
    now: Any

    def line(self) -> str:
        return (f"{FLAGS.get(self.setting, self.setting)}: {_shown(self.now)} replaces the "
                f"run's recorded {_shown(self.recorded)}")

    def as_pair(self) -> list[Any]:
        return [_json(self.recorded), _json(self.now)]


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _json(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


class EngineFlags(BaseModel, frozen=True, allow_inf_nan=False):
    """The engine flags one command line gave; None (or False for a switch): not given."""

    concurrency: int | None = Field(None, gt=0, le=defaults.MAX_CONCURRENCY)
    max_attempts: int | None = Field(None, gt=0, le=MAX_INT)
    timeout_s: float | None = Field(None, gt=0)
    backoff_base_s: float | None = Field(None, ge=0)
    backoff_cap_s: float | None = Field(None, ge=0)
    rpm: int | None = Field(None, gt=0, le=MAX_INT)
    tpm: int | None = Field(None, gt=0, le=MAX_INT)
    no_cache: bool = False
    cache_dir: Path | None = None
    refresh_cache: bool = False
    cache_key_url: bool = False
    price_in: float | None = Field(None, ge=0)
    price_out: float | None = Field(None, ge=0)
    judge_price_in: float | None = Field(None, ge=0)
    judge_price_out: float | None = Field(None, ge=0)
    max_cost: float | None = None
    max_reply_mb: float | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _coherent(self) -> EngineFlags:
        both_prices(self.price_in, self.price_out, self.judge_price_in, self.judge_price_out)
        if self.max_cost is not None and self.max_cost <= 0:
            raise ValueError("--max-cost must be more than 0 US dollars")
        if self.no_cache and (self.cache_dir is not None or self.refresh_cache):
            raise ValueError("--no-cache neither reads nor writes the cache: it cannot go "
                             "with --cache-dir or --refresh-cache")
        return self

    def _cache_path(self) -> Path | None:
        if self.no_cache:
            return None
        return (self.cache_dir / CACHE_FILE).absolute() if self.cache_dir else \
            default_cache_path()

    def new_run(self) -> EngineOptions:
        """The options of a new run: what was given, defaults for the rest."""
        given = {name: getattr(self, name) for name in _SCALARS
                 if getattr(self, name) is not None}
        return EngineOptions(**given, cache_path=self._cache_path(),
                             refresh_cache=self.refresh_cache,
                             cache_key_url=self.cache_key_url, max_cost=self.max_cost)

    def resumed(self, recorded: EngineOptions | None,
                shard: Shard | None = None) -> tuple[EngineOptions, list[Change]]:
        """A resume's options: the run's recorded ones, with each flag given again in its
        place (each such change returned, to be said and recorded). --max-cost limits one
        session, so it is never taken from the record."""
        before = recorded or EngineOptions()  # a run from before the settings were kept
        update: dict[str, Any] = {"max_cost": self.max_cost}
        for name in _SCALARS:
            if (value := getattr(self, name)) is not None:
                update[name] = value
        if self.no_cache:
            update["cache_path"] = None
        elif self.cache_dir is not None:
            path = self._cache_path()
            update["cache_path"] = shard_cache_path(path, shard) if shard and path else path
        if self.refresh_cache:
            update["refresh_cache"] = True
        if self.cache_key_url:
            update["cache_key_url"] = True
        try:
            now = EngineOptions.model_validate(before.model_dump() | update)
        except ValidationError as exc:
            raise ValueError(f"the run's recorded engine settings with these flags are not "
                             f"valid: {error_message(exc)}") from None
        changes = [Change(name, getattr(before, name), getattr(now, name))
                   for name in FLAGS if getattr(before, name) != getattr(now, name)]
        return now, changes
