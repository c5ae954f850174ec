"""How a run is run (concurrency, retries, limits, cache, prices) as run.json records it
under `engine`: the data only. The engine turns it into a retry policy, a dispatch and HTTP
limits (`visioneval.engine.options`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, model_validator

from visioneval.core import defaults
from visioneval.core.bounds import INT_RANGE
from visioneval.shards import Shard

MAX_INT = INT_RANGE[1]  # a count run.json can record
DEFAULT_MAX_REPLY_MB = defaults.MAX_REPLY_MB


class EngineOptions(BaseModel, frozen=True, allow_inf_nan=False):
    """How to run; recorded in run.json. A resume keeps them unless a flag is given again."""

    concurrency: int = Field(defaults.CONCURRENCY, gt=0)
    max_attempts: int = Field(defaults.MAX_ATTEMPTS, gt=0, le=MAX_INT)
    timeout_s: float = Field(defaults.TIMEOUT_S, gt=0)
    backoff_base_s: float = Field(defaults.BACKOFF_BASE_S, ge=0)
    backoff_cap_s: float = Field(defaults.BACKOFF_CAP_S, ge=0)
    cache_path: Path | None = None
    refresh_cache: bool = False  # send every request; its answer replaces the cached one
    rpm: int | None = Field(None, gt=0, le=MAX_INT)
    tpm: int | None = Field(None, gt=0, le=MAX_INT)
    cache_key_url: bool = False
    # The model's price in US dollars per million tokens (None: the provider's reported
    # cost, else the price table); max_cost: this session stops sending once it spent that.
    price_in: float | None = Field(None, ge=0)
    price_out: float | None = Field(None, ge=0)
    # The judge's price (vqa's --scorer judge, evaluate's judges), as the model's.
    judge_price_in: float | None = Field(None, ge=0)
    judge_price_out: float | None = Field(None, ge=0)
    max_cost: float | None = Field(None, gt=0)
    max_reply_mb: float = Field(DEFAULT_MAX_REPLY_MB, gt=0)

    @model_validator(mode="after")
    def _both_prices(self) -> EngineOptions:
        both_prices(self.price_in, self.price_out, self.judge_price_in, self.judge_price_out)
        return self

    def pricing(self) -> dict[str, float] | None:
        """What run.json keeps under `pricing` (None: no prices were given)."""
        given = {k: v for k, v in (("price_in", self.price_in), ("price_out", self.price_out),
                                   ("judge_price_in", self.judge_price_in),
                                   ("judge_price_out", self.judge_price_out)) if v is not None}
        return given or None

    def for_shard(self, shard: Shard) -> EngineOptions:
        """A shard keeps its own response cache (a file beside the usual one, named after
        the shard): shards on one machine or on a shared home folder never write one
        SQLite file at once, and a shard run again finds its own answers."""
        if self.cache_path is None:
            return self
        return self.model_copy(update={"cache_path": shard_cache_path(self.cache_path,
                                                                       shard)})

    def of_whole_run(self, shard: Shard) -> EngineOptions:
        """The options a shard's were made from (`for_shard` undone): what another shard of
        the same run starts with."""
        path = self.cache_path
        suffix = f"-shard-{shard.dirname}"
        if path is None or not path.stem.endswith(suffix):
            return self
        return self.model_copy(update={"cache_path": path.with_name(
            path.stem.removesuffix(suffix) + path.suffix)})

    @property
    def max_reply_bytes(self) -> int:
        return int(self.max_reply_mb * 2**20)

def both_prices(price_in: float | None, price_out: float | None,
                judge_in: float | None = None, judge_out: float | None = None) -> None:
    """A price is given in and out, or not at all: a ValueError naming the flags."""
    if (price_in is None) != (price_out is None):
        raise ValueError("give both --price-in and --price-out (US dollars per million "
                         "input and output tokens; 0 and 0 for a free, self-hosted model)")
    if (judge_in is None) != (judge_out is None):
        raise ValueError("give both --judge-price-in and --judge-price-out (US dollars per "
                         "million input and output tokens of the judge; 0 and 0 for your "
                         "own server)")


def shard_cache_path(path: Path, shard: Shard) -> Path:
    return path.with_name(f"{path.stem}-shard-{shard.dirname}{path.suffix}")
