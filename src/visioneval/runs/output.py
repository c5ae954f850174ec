"""Where a run talks while it runs, shared by the commands and the Python API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from visioneval.engine.progress import ProgressBoard


@dataclass(frozen=True)
class Output:
    """Where a command talks (stdout for results, stderr for progress and logs) and what it
    draws besides the run directory."""

    console: Console
    err: Console
    progress: bool = True
    report: bool = True
    early_thumbnails: bool = False
    """Make the end-of-run page's thumbnails while answers arrive (`report.early`), for a
    caller that passes them to the page (`SessionResult.thumbnails`): the commands do."""
    board: ProgressBoard | None = None  # a display shared with other runs (a suite's)
    label: str | None = None  # the run's name on that display
