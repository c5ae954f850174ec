"""Work that the end of a run needs and that waits for the event loop to be quiet.

A run spends most of its time waiting for the model: answers sent together come back
together, and between two waves the loop only waits. Work done then (the report's
thumbnails, the run's metrics read from the journal) is work the end of the run no longer
does, and costs the requests nothing, provided it never holds the loop while answers
arrive. So it is done only once no answer has come for `QUIET_S`, a piece at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

QUIET_S = 0.02
"""Work waits until no answer has come for this long: the wave of answers is in, and the
next is about a model's latency away."""


class QuietMoments:
    """Calls `step` in the event loop whenever no answer has come for `QUIET_S`, and again
    at once while it says more waits (it returns True); told of each answer (`answered`)
    and of work that came up in between (`again`). `step` does a small piece of work (a few
    milliseconds at most): the loop is held while it runs."""

    def __init__(self, step: Callable[[], bool]):
        self._step = step
        self._last = 0.0  # when the last answer came (the loop's clock)
        self._waiting: asyncio.TimerHandle | asyncio.Handle | None = None
        self._stopped = False

    def answered(self) -> None:
        """An answer came: what waits for a quiet loop waits on."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # told of records outside a run: nothing to wait for
            return
        self._last = loop.time()
        if self._waiting is None and not self._stopped:
            self._waiting = loop.call_later(QUIET_S, self._check)

    def again(self) -> None:
        """More work waits (called in the loop): a check now, if none is due."""
        if self._waiting is None and not self._stopped:
            self._waiting = asyncio.get_running_loop().call_soon(self._check)

    def _check(self) -> None:
        """If no answer came for QUIET_S: one step, and the next check at once while it
        says more waits; else a check once it will have been quiet for QUIET_S."""
        self._waiting = None
        loop = asyncio.get_running_loop()
        quiet = loop.time() - self._last
        more = self._step() if quiet >= QUIET_S else True
        if more and not self._stopped:
            self._waiting = loop.call_later(max(QUIET_S - quiet, 0.0), self._check)

    def stop(self) -> None:
        """No more steps."""
        self._stopped = True
        if self._waiting is not None:
            self._waiting.cancel()
            self._waiting = None
