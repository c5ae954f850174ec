"""A merge as a command says it: what was merged, what is missing, the run's tables."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from visioneval.commands.common import consoles, guarded
from visioneval.commands.merged import merge_and_report
from visioneval.runs.output import Output
from visioneval.terminal import setup_logging


def merge_command(shards: Sequence[Path], out: Path, *, allow_partial: bool,
          definition: str | None, report: bool) -> int:
    """`visioneval merge`: the shards merged, said as a run's end is; its exit code."""
    console, err = consoles()
    setup_logging(err, False)
    return guarded(err, lambda: merge_and_report(
        shards, out, allow_partial, Output(console, err, progress=False, report=report),
        definition=definition))
