"""A running float sum that does not depend on the order of its terms.

Metrics are sums over samples; a journal's order is the order answers arrived in, and a
merged run's is shard by shard, so a plain `+=` could differ in the last bit between two
runs of the same samples. This keeps the exact sum as a few non-overlapping partials
(Shewchuk's algorithm, the one behind `math.fsum`) and rounds once at the end: the result
is the correctly rounded exact sum, whatever the order.
"""

from __future__ import annotations

import math


class ExactSum:
    __slots__ = ("_partials",)

    def __init__(self) -> None:
        self._partials: list[float] = []

    def add(self, x: float) -> None:
        partials = self._partials
        kept = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            high = x + y
            low = y - (high - x)
            if low:
                partials[kept] = low
                kept += 1
            x = high
        partials[kept:] = [x]

    def __iadd__(self, x: float) -> ExactSum:
        self.add(x)
        return self

    @property
    def value(self) -> float:
        return math.fsum(self._partials)
