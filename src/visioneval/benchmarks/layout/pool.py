"""Where a layout sample's metrics are computed: beside the engine's event loop, never on it.

The metrics are CPU-bound (~80 ms a pair, SSIM most of it): run on the event loop they would
stall the engine (its journal writer, the captioner's requests, the progress bar). So they
run in `workers` processes (`pipeline.worker_init`: gone with their parent, Ctrl-C left to
it), or with one worker in one thread of this process. The pool starts at the first pair and
is shut down when the event loop that used it ends (`asyncio.run` cancels the task holding
it), or once no pair has been submitted for `IDLE_SECONDS` (a loop that lives on, as in a
notebook)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any, TypeVar

from visioneval.canvas.pipeline import worker_init

T = TypeVar("T")
IDLE_SECONDS = 30.0


class MetricPool:
    def __init__(self, workers: int):
        self.workers = workers
        self._executor: Executor | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._holder: asyncio.Task[None] | None = None
        self._busy = 0
        self._idle: asyncio.TimerHandle | None = None

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in the pool; its exceptions are raised here."""
        loop = asyncio.get_running_loop()
        executor = self._open(loop)
        self._busy += 1
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        try:
            return await loop.run_in_executor(executor, fn, *args)
        finally:
            self._busy -= 1
            if not self._busy and self._executor is executor:
                self._idle = loop.call_later(IDLE_SECONDS, self.close)

    def _open(self, loop: asyncio.AbstractEventLoop) -> Executor:
        if self._executor is not None and self._loop is loop:
            return self._executor
        self.close()  # a pool of an earlier loop (a second asyncio.run)
        if self.workers <= 1:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="layout-metrics")
        else:
            self._executor = ProcessPoolExecutor(self.workers, initializer=worker_init,
                                                 initargs=(os.getpid(),))
        self._loop = loop
        self._holder = loop.create_task(self._hold(), name="layout metric pool")
        return self._executor

    async def _hold(self) -> None:
        """Lives as long as the loop: cancelled when `asyncio.run` ends, closing the pool."""
        try:
            await asyncio.Event().wait()
        finally:
            self.close(wait=True)

    def close(self, wait: bool = False) -> None:
        """Stop the workers (queued pairs are dropped: their samples have no record, so a
        resume runs them)."""
        executor, self._executor = self._executor, None
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        holder, self._holder = self._holder, None
        if holder is not None and holder is not _current_task():
            holder.cancel()
        if executor is not None:
            executor.shutdown(wait=wait, cancel_futures=True)


def _current_task() -> asyncio.Task[Any] | None:
    with contextlib.suppress(RuntimeError):
        return asyncio.current_task()
    return None
