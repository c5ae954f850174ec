"""Every registered benchmark's command (generated from its definition) and `demo`.

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app, data_app
from visioneval.cli.generated import register
from visioneval.cli.options import NoProgress, NoReport, Verbose
from visioneval.cli.panels import OUTPUT

register(app, data_app)


@app.command()
def demo(
    n: Annotated[int, typer.Option(min=1, help="Synthetic scenes per config.")] = 100,
    seed: Annotated[int, typer.Option(help="Seed of the synthetic scenes.")] = 0,
    out: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Run directory.", show_default="results/salbench-popout-<time>",
        rich_help_panel=OUTPUT)] = None,
    no_progress: NoProgress = False,
    no_report: NoReport = False,
    verbose: Verbose = False,
) -> None:
    """Offline: a builtin baseline on a small synthetic set, end to end (no server, no
    download): the SalBench popout baseline on synthetic P3 scenes."""
    from visioneval.commands.demo import demo as command

    raise typer.Exit(command(n=n, seed=seed, out=out, no_progress=no_progress,
                             no_report=no_report, verbose=verbose))
