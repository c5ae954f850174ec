"""Which samples a report page embeds: a bounded set, the failures first.

A run of 130,000 samples cannot put every sample in one page that opens in a second, so
the page keeps at most `limit` rows: errors, then unparsed answers, then wrong answers,
then the rest, each class spread over the run by a hash of the sample id (not the first N
in journal order, which would all be one config). The records are streamed once; memory
holds at most `limit` rows, whatever the run's size."""

from __future__ import annotations

import heapq
import zlib
from dataclasses import dataclass, field
from typing import Any

ERROR, UNPARSED, WRONG, REST = range(4)
KINDS = ("errors", "unparsed", "wrong", "other")


def priority(row: dict[str, Any]) -> int:
    """A browser row's class: error, unparsed (some view read no answer and was not right),
    wrong (some view judged it wrong), or the rest."""
    if row.get("e") is not None:
        return ERROR
    views = row["v"].values()
    if any(v.get("a") == "" and v.get("ok") is not True for v in views):
        return UNPARSED
    if any(v.get("ok") is False for v in views):
        return WRONG
    return REST


@dataclass
class Selection:
    """The `limit` rows with the lowest (class, id hash), kept in a max-heap."""

    limit: int
    seen: list[int] = field(default_factory=lambda: [0] * len(KINDS))
    _heap: list[tuple[int, int, int, dict[str, Any]]] = field(default_factory=list)

    def wants(self, kind: int, sample_id: str) -> tuple[int, int] | None:
        """Count the sample; its sort key if it would be kept (so a row is only built for
        the samples that can make it)."""
        self.seen[kind] += 1
        key = (kind, zlib.crc32(sample_id.encode()))
        if len(self._heap) < self.limit:
            return key
        worst = self._heap[0]
        return key if (-worst[0], -worst[1]) > key else None

    def add(self, key: tuple[int, int], order: int, row: dict[str, Any]) -> None:
        item = (-key[0], -key[1], -order, row)
        if len(self._heap) < self.limit:
            heapq.heappush(self._heap, item)
        else:
            heapq.heapreplace(self._heap, item)

    def rows(self) -> list[tuple[int, dict[str, Any]]]:
        """(class, row) of the kept rows, in journal order."""
        return [(-k, row) for k, _, _, row in sorted(self._heap, key=lambda i: -i[2])]

    @property
    def total(self) -> int:
        return sum(self.seen)
