"""How a command spreads its work: one shard of it (`--shard K/N`, for a job array) or
every shard as a Ray task (`--executor ray --shards N`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from visioneval.shards import DEFAULT_RAY_SHARDS, MAX_RAY_SHARDS, Shard

Executor = Literal["local", "ray"]


@dataclass(frozen=True)
class Distribution:
    """The distribution flags of one command, checked together."""

    shard: Shard | None = None
    executor: Executor = "local"
    shards: int | None = None
    ray_address: str | None = None

    @classmethod
    def from_flags(cls, shard: str | None, executor: str, shards: int | None,
                   ray_address: str | None) -> Distribution:
        if executor not in ("local", "ray"):
            raise ValueError(f"--executor {executor!r}: local or ray")
        if executor == "local":
            if shards is not None:
                raise ValueError("--shards goes with --executor ray (for one shard of a run, "
                                 "--shard K/N)")
            if ray_address is not None:
                raise ValueError("--ray-address goes with --executor ray")
        elif shard is not None:
            raise ValueError("--executor ray runs every shard itself; drop --shard (or run "
                             "one shard locally with --shard K/N)")
        if shards is not None and shards < 1:
            raise ValueError("--shards must be at least 1")
        if shards is not None and shards > MAX_RAY_SHARDS:
            raise ValueError(f"--shards {shards}: at most {MAX_RAY_SHARDS} (each shard is a "
                             "Ray task and a folder of its own)")
        return cls(Shard.parse(shard) if shard is not None else None,
                   "ray" if executor == "ray" else "local", shards, ray_address)

    @property
    def on_ray(self) -> bool:
        return self.executor == "ray"

    @property
    def shard_count(self) -> int:
        return self.shards or DEFAULT_RAY_SHARDS
