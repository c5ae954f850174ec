"""`visioneval show`: every table of a run in the terminal, read from the run directory
alone."""

from __future__ import annotations

from pathlib import Path

from visioneval.commands.common import consoles, guarded, named_definition, warn_untrusted
from visioneval.core.rundir import load
from visioneval.report.shown import show as show_run


def show(run_dir: Path, definition: str | None) -> int:
    """Print the run's tables; exit 0, or 2 with one line."""
    console, err = consoles()

    def action() -> int:
        view = load(run_dir, named_definition(definition))
        warn_untrusted(err, [view.untrusted, view.data_change])
        show_run(view, console)
        return 0

    return guarded(err, action)
