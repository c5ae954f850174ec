"""Glue shared by the commands: consoles, logging, the errors that end a command with code 2."""

from __future__ import annotations

import logging
from collections.abc import Callable

from rich.console import Console

from visioneval import terminal
from visioneval.backends.base import PreflightError
from visioneval.core.store import RunDirError
from visioneval.engine.cache import CacheError
from visioneval.io.parquet import DataError

USER_ERRORS = (PreflightError, DataError, RunDirError, CacheError, ValueError,
               FileNotFoundError)
EXIT_USAGE = 2
READ_MORE_THAN_ONCE = ("visioneval.core.store",)  # loggers of readers a command calls again


def consoles() -> tuple[Console, Console]:
    """(stdout for results, stderr for progress and logs), each at most 100 columns wide."""
    return terminal.console(), terminal.console(stderr=True)


class LineHandler(logging.Handler):
    """One log record, one unwrapped line (a bad row or file is one line to read and grep),
    printed through the console the progress bar uses (so lines appear above the bar instead
    of tearing it). What a run directory's reader warns about (a torn or bad journal line)
    is said once per command, however often the command reads the directory."""

    STYLES = {"WARNING": "yellow", "ERROR": "bold red", "CRITICAL": "bold red", "DEBUG": "dim"}

    def __init__(self, console: Console):
        super().__init__()
        self.console = console
        self.said: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = f"{record.levelname.lower()}: {self.format(record)}"
            if record.name in READ_MORE_THAN_ONCE:
                if line in self.said:
                    return
                self.said.add(line)
            self.console.print(line, style=self.STYLES.get(record.levelname), soft_wrap=True,
                               markup=False, highlight=False, emoji=False)
        except Exception:  # logging must never break a run
            self.handleError(record)


def setup_logging(console: Console, verbose: bool) -> None:
    logging.basicConfig(level=logging.WARNING, handlers=[LineHandler(console)],
                        format="%(message)s", force=True)
    logging.getLogger("visioneval").setLevel(logging.DEBUG if verbose else logging.INFO)


def guarded(err: Console, action: Callable[[], int]) -> int:
    """Run a command; a user-facing error becomes one red line and exit code 2."""
    try:
        return action()
    except USER_ERRORS as exc:
        # The message is text, not markup: "visioneval[ray]" must print as written.
        terminal.error_line(err, str(exc))
        return EXIT_USAGE


def split_list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    return items or None

