"""`visioneval rescore`: another tool's per-sample outputs scored under visioneval's rules,
written as a run directory (rescore/command.py does the work and prints it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from visioneval.commands.common import consoles, guarded
from visioneval.core.foreign import RescoreRequest
from visioneval.rescore.command import run_command
from visioneval.terminal import setup_logging


def rescore(tool: str, paths: Sequence[Path], *, benchmark: str | None,
            data_dir: Path | None, model: str | None, out: Path | None, verbose: bool,
            report: bool) -> int:
    """The logs of `tool` re-scored; exit 0 when something was, else 2 with one line."""
    console, err = consoles()
    setup_logging(err, verbose)

    def action() -> int:
        request = RescoreRequest(data_dir=data_dir, model=model)
        return run_command(tool, paths, out, request, benchmark, console, err, report=report)

    return guarded(err, action)
