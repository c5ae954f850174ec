"""`visioneval rescore`: another tool's per-sample outputs, scored under visioneval's rules."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app
from visioneval.cli.options import NoReport


class Tool(StrEnum):
    lmms_eval = "lmms-eval"


@app.command()
def rescore(
    paths: Annotated[list[Path], typer.Argument(
        help="The tool's per-sample files, or folders holding them (lmms-eval: the "
        "<date>_samples_<task>.jsonl files --log_samples writes).", show_default=False)],
    tool: Annotated[Tool, typer.Option("--from", help="The tool that wrote them.")],
    out: Annotated[Path | None, typer.Option(help="Run directory to write (default: "
                                             "results/<benchmark>-rescored-<model>-<time>).")
                   ] = None,
    benchmark: Annotated[str | None, typer.Option(help="The benchmark to re-score when the "
                                                  "logs hold several.")] = None,
    data_dir: Annotated[Path | None, typer.Option(help="Local copy of the data a log only "
                                                  "points at (a log without labels is joined "
                                                  "with the files the tool read; default: "
                                                  "download them).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name to record (default: the "
                                              "tool's results file, else its folder).")
                     ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logging.")] = False,
    no_report: NoReport = False,
) -> None:
    """Re-score another tool's logged answers under visioneval's rules (every parser and
    protocol), writing a run directory; no request is sent."""
    from visioneval.commands.common import consoles, guarded, setup_logging
    from visioneval.rescore.command import run_command
    from visioneval.rescore.foreign import RescoreRequest

    console, err = consoles()
    setup_logging(err, verbose)

    def action() -> int:
        request = RescoreRequest(data_dir=data_dir, model=model)
        return run_command(tool.value, paths, out, request, benchmark, console, err,
                           report=not no_report)

    raise typer.Exit(guarded(err, action))
