"""`visioneval report`: one run's self-contained page, RUN_DIR/report.html (or, for a run of
the user's own benchmark read without its definition, report-generic.html beside it)."""

from __future__ import annotations

from pathlib import Path

from visioneval.commands.common import consoles, guarded, named_definition, warn_untrusted
from visioneval.core.rundir import load
from visioneval.report.page import write_page
from visioneval.terminal import line


def report(run_dir: Path, thumbnails: int, rows: int, definition: str | None) -> int:
    """Write the page and say where it is and how big; exit 0, or 2 with one line."""
    console, err = consoles()

    def action() -> int:
        view = load(run_dir, named_definition(definition))
        warn_untrusted(err, [view.untrusted, view.data_change])
        path = write_page(view, thumbnails, rows)
        line(console, f"report: {path} ({path.stat().st_size / 1e6:.1f} MB)")
        if view.untrusted:
            line(console, f"{path.name}: drawn without your benchmark's code, beside "
                          "report.html, which is left as it was")
        return 0

    return guarded(err, action)
