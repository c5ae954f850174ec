"""Which shard a sample belongs to: a partition of a run on its stable sample ids.

A sample's shard depends on its id alone (a hash, not its position), so the same sample
lands in the same shard whatever the order of the data, the other options or the machine;
shards 1..N of a run hold every sample exactly once, and merging them gives the run's own
records (`visioneval merge`, `distributed/merge.py`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

DEFAULT_RAY_SHARDS = 4
MAX_RAY_SHARDS = 4096  # each shard is a Ray task, a folder and a journal of its own

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard `index` of `count` (1-based, as `--shard K/N` and SLURM array ids count)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 1 <= self.index <= self.count:
            raise ValueError(f"--shard {self.index}/{self.count}: K must be between 1 and N "
                             "(write K/N, for example 2/4)")

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = _SPEC.match(text)
        if match is None:
            raise ValueError(f"--shard {text!r}: write K/N, for example 2/4 (shard K of N)")
        return cls(int(match.group(1)), int(match.group(2)))

    def holds(self, key: str) -> bool:
        return shard_of(key, self.count) == self.index

    def as_dict(self) -> dict[str, int]:
        return {"index": self.index, "count": self.count}

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def dirname(self) -> str:
        """The folder a distributed run gives this shard ("2-of-4")."""
        return f"{self.index}-of-{self.count}"


def shard_of(key: str, count: int) -> int:
    """The 1-based shard of `key` among `count`: BLAKE2b of the key (stable across
    processes and Python versions, unlike `hash`), modulo `count`."""
    value = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big")
    return value % count + 1
