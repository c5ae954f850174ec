"""What `visioneval rescore` prints: the benchmark's own tables, where the run is, what the
reading found (bad lines, skipped samples, the tool's failed requests, checks)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from visioneval.core.foreign import RescoreRequest
from visioneval.core.rundir import just_made
from visioneval.invocation import command
from visioneval.report.page import try_write_report
from visioneval.rescore.run import rescore
from visioneval.terminal import error_line, line, print_command


def run_command(tool: str, paths: Sequence[Path], out: Path | None, request: RescoreRequest,
                only: str | None, console: Console, err: Console, report: bool = True) -> int:
    """Re-score, print, write the report; 0 when something was re-scored, else 2."""
    def left_out(line: str) -> None:
        err.print(line, highlight=False, markup=False)

    done = rescore(tool, paths, out, request, only, left_out)
    result = done.result
    view = just_made(result.directory)  # visioneval's own definition, as run.json names it
    view.shown.print_main_table(view, console)
    stats = result.stats
    line(console, f"{result.n_records} samples re-scored from {tool} logs, no request sent "
                  f"({result.n_errors} failed in {tool}'s run, {stats.skipped} skipped, "
                  f"{done.bad_lines} bad lines) -> {result.directory}")
    for note in done.notes:
        err.print(f"  {note}", highlight=False, markup=False)
    if stats.error_reasons:
        err.print(f"failed requests in {tool}'s log (left out of every score):",
                  highlight=False)
        for reason, count in stats.top_reasons():
            err.print(f"  {count:>6} x {reason}", highlight=False,
                      markup=False)
    if report:
        page = try_write_report(result.directory)
        if page is not None:
            line(console, f"report: {page}")
        print_command(console, "all tables:", command("show", result.directory))
    if not result.n_records:
        error_line(err, "nothing was re-scored (see the lines above); "
                        f"{result.directory} holds the empty run")
        return 2
    return 0
