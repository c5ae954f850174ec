"""A merge said as a run's end is: what was merged, what is missing, the run's tables
(`visioneval merge`, and a run command whose shards ran on Ray)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from visioneval.commands.common import consoles, guarded
from visioneval.commands.run import report
from visioneval.core.store import RunStore
from visioneval.distributed.merge import merge
from visioneval.runs.output import Output
from visioneval.runs.target import resume_command
from visioneval.terminal import line, print_command, setup_logging


def merge_and_report(directories: Sequence[Path], out: Path, allow_partial: bool,
                     output: Output, replace: bool = False,
                     definition: str | None = None) -> int:
    """Merge, print the merged run's tables and closing line; exit 1 if samples failed or
    shards are missing (the merged numbers are then not the whole run's). `definition`: the
    user's own benchmark's definition, named for the merge (`merge.merge`)."""
    result, _, plan = merge(directories, out, allow_partial, replace, definition)
    line(output.err, f"merged {len(plan.runs)} of {plan.count} shards into {out}")
    code = report(result, output, definition)
    if plan.missing:
        missing = ", ".join(f"{k}/{plan.count}" for k in plan.missing)
        running = ", ".join(f"{k}/{plan.count}" for k in plan.running)
        still = (f" ({running} {'was' if len(plan.running) == 1 else 'were'} still running; "
                 "merge again once finished)") if running else ""
        again = resume_command(RunStore.open(out).info, out)
        print_command(output.err, f"shards {missing} are missing{still}: these numbers leave "
                                  "their samples out; this runs them:", again, style="yellow")
        return max(code, 1)
    return code


def merge_command(shards: Sequence[Path], out: Path, *, allow_partial: bool,
          definition: str | None, report: bool) -> int:
    """`visioneval merge`: the shards merged, said as a run's end is; its exit code."""
    console, err = consoles()
    setup_logging(err, False)
    return guarded(err, lambda: merge_and_report(
        shards, out, allow_partial, Output(console, err, progress=False, report=report),
        definition=definition))
