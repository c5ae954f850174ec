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
    finishes); nothing when none waits."""

    def __init__(self) -> None:
        super().__init__()
        self.watch: RetryWatch | None = None

    def text(self) -> str:
        watch = self.watch
        if watch is None or not watch.waiting:
            return ""
        seconds = max(0.0, watch.next_retry_at - time.monotonic())
        return f"{watch.waiting} waiting (retry in {seconds:.0f}s)"

    def render(self, task: Task) -> Text:
        return Text(self.text(), style="yellow")


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
    429 count and endpoints taken out; read at each refresh."""

    def __init__(self) -> None:
        super().__init__()
        self.state: DispatchState | None = None

    def text(self) -> str:
        state = self.state
        if state is None:
            return ""
        parts = [f"{state.in_flight}/{state.concurrency_now} in flight"]
        if state.http_429:
            parts.append(f"{state.http_429} x 429")
        if state.endpoints_out:
            parts.append(f"{state.endpoints_out} endpoint(s) out")
        return ", ".join(parts)

    def render(self, task: Task) -> Text:
        return Text(self.text(), style="magenta")


class RunProgress:
    """Wraps rich's Progress; `advance` counts one finished sample."""

    def __init__(self, total: int | None, description: str, *, completed: int = 0,
                 console: Console | None = None, enabled: bool = True):
        self.errors = 0
        self._pending = 0
        self._last = 0.0
        self._waits = WaitColumn()
        self._dispatch = DispatchColumn()
        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            RateColumn(), TextColumn("[red]{task.fields[errors]} errors"),
            TimeRemainingColumn(), self._dispatch, self._waits, console=console,
            disable=not enabled, transient=False)
        # Samples finished in an earlier session start as completed, so the rate and ETA
        # describe this session's work only.
        self._task = self._progress.add_task(description, total=total, completed=completed,
                                             errors=0)

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()
        self._progress.stop()

    def watch_retries(self, watch: RetryWatch) -> None:
        """Show the requests waiting to retry (backing off, or as the server asked)."""
        self._waits.watch = watch

    def waits_text(self) -> str:
        return self._waits.text()

    def watch_dispatch(self, state: DispatchState) -> None:
        """Show the concurrency in use, the 429s and the endpoints taken out."""
        self._dispatch.state = state

    def dispatch_text(self) -> str:
        return self._dispatch.text()

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
