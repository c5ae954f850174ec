"""`visioneval report` (one run's page), `visioneval runs` (the runs under a folder),
`visioneval view` (every sample of a run, served locally), `visioneval compare` (several
runs, one table) and `visioneval show` (a run's tables in the terminal).

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app

# visioneval never imports code a run directory names: a run of the user's own benchmark is
# read with its definition only when the command line names it (docs/adding-a-benchmark.md).
Definition = Annotated[str | None, typer.Option(
    "--definition", metavar="MODULE:ATTR", help="Your own benchmark's definition, trusted.",
    show_default=False)]


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.", show_default=False)],
    thumbnails: Annotated[int, typer.Option(min=0, metavar="N", help="Most distinct images "
                                            "shown as thumbnails.")] = 1000,
    rows: Annotated[int, typer.Option(min=0, metavar="N", help="Most samples in the page "
                                      "(failures first).")] = 3000,
    definition: Definition = None,
) -> None:
    """Write RUN_DIR/report.html: one self-contained page (tables, charts, sample browser).
    A run of your own benchmark without --definition gets report-generic.html instead."""
    from visioneval.commands.report import report as command

    raise typer.Exit(command(run_dir, thumbnails, rows, definition))


@app.command()
def runs(
    folder: Annotated[Path, typer.Argument(
        help="The folder searched for runs (its subfolders too).", show_default=True)
                      ] = Path("results"),
    no_page: Annotated[bool, typer.Option("--no-page", help="Do not write FOLDER/runs.html.")
                       ] = False,
    definition: Definition = None,
) -> None:
    """List every run under FOLDER, newest first (benchmark, model, status, main number with
    its 95% interval, n), and write FOLDER/runs.html, sortable, linking each run's report."""
    from visioneval.commands.runs import runs as command

    raise typer.Exit(command(folder, no_page, definition))


@app.command()
def view(
    run_dir: Annotated[Path, typer.Argument(
        help="A run directory, or a folder of runs (its subfolders too): their list, each "
             "run linking its samples.", show_default=True)] = Path("results"),
    port: Annotated[int | None, typer.Option(
        metavar="N", help="Port on 127.0.0.1, 0-65535 (0: any free port).",
        show_default="8766, or the next free one when another view holds it")] = None,
    definition: Definition = None,
) -> None:
    """Browse every sample of a run (filters, full answers, thumbnails from the dataset) in
    a local page served on 127.0.0.1, until Ctrl-C; given a folder of runs (results/ by
    default), the list of its runs first."""
    from visioneval.commands.view import view as command

    raise typer.Exit(command(run_dir, port, definition))


@app.command()
def compare(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories of one benchmark.",
                                                   show_default=False)],
    out: Annotated[Path | None, typer.Option(metavar="DIR", help="Also write "
                                             "comparison.csv, .md and .html here.")] = None,
    common_only: Annotated[bool, typer.Option(
        "--common-only", help="Compare on the samples every run has.")] = False,
    reference: Annotated[str | None, typer.Option(
        metavar="<paper>", help="Each run beside the paper's published row.")] = None,
    reference_model: Annotated[str | None, typer.Option(
        metavar="NAME", help="The published model to compare with.",
        show_default="the run's model")] = None,
    definition: Definition = None,
) -> None:
    """Compare runs in the paper's table layout; differing settings are flagged, not mixed."""
    from visioneval.commands.compare import compare as command

    raise typer.Exit(command(run_dirs, out=out, common_only=common_only, reference=reference,
                             reference_model=reference_model, definition=definition))


@app.command()
def show(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.", show_default=False)],
    definition: Definition = None,
) -> None:
    """Print every table of a run in the terminal (a run ends with its main table only),
    read from the run directory alone."""
    from visioneval.commands.show import show as command

    raise typer.Exit(command(run_dir, definition))
