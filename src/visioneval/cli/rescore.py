"""`visioneval rescore`: another tool's per-sample outputs, scored under visioneval's rules.

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app
from visioneval.cli.options import NoReport, Verbose
from visioneval.cli.panels import OUTPUT


class Tool(StrEnum):
    lmms_eval = "lmms-eval"
    vlmevalkit = "vlmevalkit"


@app.command()
def rescore(
    paths: Annotated[list[Path], typer.Argument(
        help="The tool's per-sample files, or folders of them.", show_default=False)],
    tool: Annotated[Tool, typer.Option(
        "--from", metavar="TOOL", help="The tool that wrote them: lmms-eval or vlmevalkit.")],
    benchmark: Annotated[str | None, typer.Option(
        metavar="NAME", help="The benchmark to re-score when the logs hold several.")] = None,
    data_dir: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Local copy of the data a log only points at.",
        show_default="download it")] = None,
    model: Annotated[str | None, typer.Option(
        metavar="NAME", help="Model name to record.", show_default="the tool's")] = None,
    out: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Run directory.",
        show_default="results/<benchmark>-rescored-<model>-<time>", rich_help_panel=OUTPUT)
    ] = None,
    verbose: Verbose = False,
    no_report: NoReport = False,
) -> None:
    """Re-score another tool's logged answers under visioneval's rules (every parser and
    protocol), writing a run directory; no request is sent."""
    from visioneval.commands.rescore import rescore as command

    raise typer.Exit(command(tool.value, paths, benchmark=benchmark, data_dir=data_dir,
                             model=model, out=out, verbose=verbose, report=not no_report))
