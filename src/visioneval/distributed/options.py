"""How a command spreads its work: one shard of it (`--shard K/N`, for a job array) or
every shard as a Ray task (`--executor ray --shards N`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from visioneval.shards import DEFAULT_RAY_SHARDS, Shard

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
        """The flags as given, read (what they cannot go with: `RunSpec`)."""
        if executor not in ("local", "ray"):
            raise ValueError(f"--executor {executor!r}: local or ray")
        return cls(Shard.parse(shard) if shard is not None else None,
                   "ray" if executor == "ray" else "local", shards, ray_address)

    @property
    def on_ray(self) -> bool:
        return self.executor == "ray"

    @property
    def shard_count(self) -> int:
        return self.shards or DEFAULT_RAY_SHARDS
