"""`visioneval show RUN_DIR`: every table of a run in the terminal, read from its directory
alone (the benchmark's definition by the trust rule, never code the run names): the
benchmark's tables (`BenchmarkDefinition.print_tables`), the variants' paired tests and the
repeated answers' summary, then the run's counts, cost and where its report is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from rich.console import Console

from visioneval.core.rundir import OpenedRun
from visioneval.epochs import shown as epochs_shown
from visioneval.epochs.summary import read as read_epochs
from visioneval.metrics.person_display import read as read_person
from visioneval.report import person
from visioneval.report.cost import cost_line
from visioneval.terminal import line
from visioneval.variants import shown
from visioneval.variants.summary import read

T = TypeVar("T")


def show(view: OpenedRun, console: Console) -> None:
    info = view.info
    status = f" ({info.status})" if info.status else ""
    line(console, f"{view.title}, {view.directory}{status}", style="bold")
    if not view.has_records:
        line(console, "no sample was recorded, so there are no tables")
    else:
        view.shown.print_tables(view, console)
        _beside("variants", read, shown.show, view, console)
        _beside("epochs", read_epochs, epochs_shown.show, view, console)
        _beside("person", read_person, person.show, view, console)
    console.print()
    counts = info.counts
    if counts is not None:
        line(console, f"{counts.records} samples recorded ({counts.errors} errors, "
                      f"{counts.skipped_rows} rows skipped, {counts.cache_hits} from cache)")
    if info.stopping is not None:
        line(console, info.stopping.line())
    line(console, cost_line(counts.cost if counts is not None else None))
    page = view.directory / "report.html"
    if page.is_file():
        line(console, f"report: {page}")


def _beside(what: str, read: Callable[[Path], T | None],
            show_it: Callable[[T, Console], None], view: OpenedRun, console: Console) -> None:
    """A summary beside the benchmark's tables (variants.json: the variants' paired table
    and the lines on answering without the image; epochs.json: the repeated answers'), or
    the one line saying why its file cannot be read."""
    try:
        summary = read(view.directory)
    except ValueError as exc:
        console.print()
        line(console, f"{what}: {exc}")
        return
    if summary is not None:
        console.print()
        show_it(summary, console)
