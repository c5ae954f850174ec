"""Glue shared by the commands: consoles, logging, the errors that end a command with code 2."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console

from visioneval import terminal
from visioneval.backends.base import PreflightError
from visioneval.core import registry
from visioneval.core.store import RunDirError
from visioneval.engine.cache import CacheError
from visioneval.io.parquet import DataError

if TYPE_CHECKING:
    from visioneval.core.benchmark import BenchmarkDefinition

USER_ERRORS = (PreflightError, DataError, RunDirError, CacheError, ValueError,
               FileNotFoundError)
EXIT_USAGE = 2


def consoles() -> tuple[Console, Console]:
    """(stdout for results, stderr for progress and logs), each at most 100 columns wide."""
    return terminal.console(), terminal.console(stderr=True)


def guarded(err: Console, action: Callable[[], int]) -> int:
    """Run a command; a user-facing error becomes one red line and exit code 2."""
    try:
        return action()
    except USER_ERRORS as exc:
        # The message is text, not markup: "visioneval[ray]" must print as written.
        terminal.error_line(err, str(exc))
        return EXIT_USAGE


def named_definition(definition: str | None) -> BenchmarkDefinition | None:
    """The definition the user named with --definition, imported once (it is trusted: the
    user gave it), or None. visioneval never imports code a run directory names: a run of
    the user's own benchmark is read with its definition only when the command line names
    it (docs/adding-a-benchmark.md)."""
    return registry.definition(definition) if definition is not None else None


def warn_untrusted(err: Console, lines: list[str | None]) -> None:
    """The one line per run shown with the generic definition (`OpenedRun.untrusted`) or
    whose data changed since it ran (`OpenedRun.data_change`)."""
    for line in dict.fromkeys(line for line in lines if line):
        terminal.warning_line(err, line)
