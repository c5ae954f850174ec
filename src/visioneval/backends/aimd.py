"""Adaptive concurrency: additive increase, multiplicative decrease (as TCP's congestion
window, RFC 5681), driven by HTTP 429.

On a 429 the limit halves; each answered request adds 1/limit, so the limit grows by one
per round of answers. A burst of 429s from requests that were already in flight when the
limit was cut counts once: only a request sent after the last cut can cut again.
"""

from __future__ import annotations

import time

DECREASE = 0.5


class Aimd:
    """The number of requests a model may have in flight, between 1 and `ceiling`."""

    def __init__(self, ceiling: int, clock=time.perf_counter):
        self.ceiling = ceiling
        self.limit = float(ceiling)
        self.lowest = float(ceiling)
        self._clock = clock
        self._cut_at = -1.0

    @property
    def allowed(self) -> int:
        return max(1, int(self.limit))

    @property
    def allowed_lowest(self) -> int:
        return max(1, int(self.lowest))

    def answered(self) -> None:
        if self.limit < self.ceiling:
            self.limit = min(float(self.ceiling), self.limit + 1.0 / self.limit)

    def throttled(self, sent_at: float) -> bool:
        """A 429 for a request sent at `sent_at` (on the same clock); True when the limit
        was cut."""
        if sent_at < self._cut_at:
            return False
        self.limit = max(1.0, self.limit * DECREASE)
        self.lowest = min(self.lowest, self.limit)
        self._cut_at = self._clock()
        return True
