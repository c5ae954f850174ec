"""A rich progress bar: done/total, samples per second, errors and ETA."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

if TYPE_CHECKING:
    from visioneval.engine.retry import RetryWatch


class RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:6.1f}/s" if speed else "     -/s", style="cyan")


class WaitColumn(ProgressColumn):
    """Requests waiting to retry, read at each refresh (so a long wait is seen while nothing
    finishes); nothing when none waits. One watch per task (a board shows several runs)."""

    def __init__(self) -> None:
        super().__init__()
        self.watches: dict[TaskID, RetryWatch] = {}

    def text(self, task_id: TaskID) -> str:
        watch = self.watches.get(task_id)
        if watch is None or not watch.waiting:
            return ""
        seconds = max(0.0, watch.next_retry_at - time.monotonic())
        return f"{watch.waiting} waiting (retry in {seconds:.0f}s)"

    def render(self, task: Task) -> Text:
        return Text(self.text(task.id), style="yellow")


class DispatchState(Protocol):
    """What a dispatcher shows: the current concurrency limit, 429s and endpoints out."""

    in_flight: int
    http_429: int

    @property
    def endpoints_out(self) -> int: ...

    @property
    def concurrency_now(self) -> int: ...


class DispatchColumn(ProgressColumn):
    """Requests in flight against the current limit (cut on 429, grown back slowly), the
    429 count and endpoints taken out; read at each refresh, per task."""

    def __init__(self) -> None:
        super().__init__()
        self.states: dict[TaskID, DispatchState] = {}

    def text(self, task_id: TaskID) -> str:
        state = self.states.get(task_id)
        if state is None:
            return ""
        parts = [f"{state.in_flight}/{state.concurrency_now} in flight"]
        if state.http_429:
            parts.append(f"{state.http_429} x 429")
        if state.endpoints_out:
            parts.append(f"{state.endpoints_out} endpoint(s) out")
        return ", ".join(parts)

    def render(self, task: Task) -> Text:
        return Text(self.text(task.id), style="magenta")


class ProgressBoard:
    """One live display of one or more runs' bars (a suite shows each of its runs on one
    board; a single run owns its own)."""

    def __init__(self, console: Console | None = None, enabled: bool = True):
        self.waits = WaitColumn()
        self.dispatch = DispatchColumn()
        self.progress = Progress(
            # The description is a run's name as the user gave it: text, never markup.
            TextColumn("{task.description}", style="bold", markup=False), BarColumn(),
            MofNCompleteColumn(), RateColumn(),
            TextColumn("{task.fields[errors]} errors", style="red", markup=False),
            TimeRemainingColumn(), self.dispatch, self.waits, console=console,
            disable=not enabled, transient=False)

    def __enter__(self) -> ProgressBoard:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()


class RunProgress:
    """One run's bar; `advance` counts one finished sample. On its own board, or on a
    shared one (`board`) that its owner starts and stops."""

    def __init__(self, total: int | None, description: str, *, completed: int = 0,
                 console: Console | None = None, enabled: bool = True,
                 board: ProgressBoard | None = None):
        self.errors = 0
        self._pending = 0
        self._last = 0.0
        self._own = board is None
        self._board = board if board is not None else ProgressBoard(console, enabled)
        self._progress = self._board.progress
        # Samples finished in an earlier session start as completed, so the rate and ETA
        # describe this session's work only.
        self._task = self._progress.add_task(description, total=total, completed=completed,
                                             errors=0)
        self.description = description

    def __enter__(self) -> RunProgress:
        if self._own:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()
        self._board.waits.watches.pop(self._task, None)
        self._board.dispatch.states.pop(self._task, None)
        if self._own:
            self._progress.stop()

    def watch_retries(self, watch: RetryWatch) -> None:
        """Show the requests waiting to retry (backing off, or as the server asked)."""
        self._board.waits.watches[self._task] = watch

    def waits_text(self) -> str:
        return self._board.waits.text(self._task)

    def watch_dispatch(self, state: DispatchState) -> None:
        """Show the concurrency in use, the 429s and the endpoints taken out."""
        self._board.dispatch.states[self._task] = state

    def dispatch_text(self) -> str:
        return self._board.dispatch.text(self._task)

    def describe(self, text: str) -> None:
        """Show `text` as the bar's name (a --batch run says its batches' state there)."""
        self._progress.update(self._task, description=text)

    def set_total(self, total: int) -> None:
        """The real total, once known (a shard's share is known after its data is read)."""
        self._progress.update(self._task, total=total)

    def set_completed(self, completed: int) -> None:
        """Samples done so far, counted elsewhere (a distributed run's shards)."""
        self._progress.update(self._task, completed=completed)

    def skip(self, samples: int = 1) -> None:
        """A row that could not become samples: done, but neither answered nor failed."""
        self._count(0, samples)

    def advance(self, error: bool) -> None:
        self._count(1 if error else 0)

    def _count(self, errors: int, samples: int = 1) -> None:
        """Counts are kept here and handed to rich at most every 50 ms: rich's update takes
        a lock and keeps speed samples, which would cost more than the sample itself."""
        self.errors += errors
        self._pending += samples
        now = time.monotonic()
        if now - self._last >= 0.05:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        if self._pending:
            self._progress.update(self._task, advance=self._pending, errors=self.errors)
            self._pending = 0
        self._last = time.monotonic() if now is None else now
