"""A rich progress bar: done/total, samples per second, errors and ETA."""

from __future__ import annotations

import time

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


class RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:6.1f}/s" if speed else "     -/s", style="cyan")


class RunProgress:
    """Wraps rich's Progress; `advance` counts one finished sample."""

    def __init__(self, total: int | None, description: str, *, completed: int = 0,
                 console: Console | None = None, enabled: bool = True):
        self.errors = 0
        self._pending = 0
        self._last = 0.0
        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            RateColumn(), TextColumn("[red]{task.fields[errors]} errors"),
            TimeRemainingColumn(), console=console, disable=not enabled, transient=False)
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
