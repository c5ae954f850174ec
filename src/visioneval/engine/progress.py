"""A rich progress bar: done/total, samples per second, errors and ETA."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

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


class RunProgress:
    """Wraps rich's Progress; `advance` counts one finished sample."""

    def __init__(self, total: int | None, description: str, *, completed: int = 0,
                 console: Console | None = None, enabled: bool = True):
        self.errors = 0
        self._pending = 0
        self._last = 0.0
        self._waits = WaitColumn()
        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            RateColumn(), TextColumn("[red]{task.fields[errors]} errors"),
            TimeRemainingColumn(), self._waits, console=console, disable=not enabled,
            transient=False)
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
