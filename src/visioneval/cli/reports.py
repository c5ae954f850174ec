"""`visioneval report` (one run's page), `visioneval view` (every sample of a run, served
locally) and `visioneval compare` (several runs, one table)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from visioneval.cli.app import app

if TYPE_CHECKING:
    from rich.console import Console

    from visioneval.core.benchmark import BenchmarkDefinition
    from visioneval.core.rundir import OpenedRun
    from visioneval.report.reference import ReferenceReport

# visioneval never imports code a run directory names: a run of the user's own benchmark is
# read with its definition only when the command line names it (docs/adding-a-benchmark.md).
Definition = Annotated[str | None, typer.Option(
    "--definition", metavar="MODULE:ATTR", help="Your own benchmark's definition, trusted.",
    show_default=False)]


def named_definition(definition: str | None) -> BenchmarkDefinition | None:
    """The definition the user named on the command line, imported once (it is trusted:
    the user gave it), or None."""
    from visioneval.core import registry

    return registry.definition(definition) if definition is not None else None


def warn_untrusted(err: Console, lines: list[str | None]) -> None:
    """The one line per run shown with the generic definition (`OpenedRun.untrusted`) or
    whose data changed since it ran (`OpenedRun.data_change`)."""
    from visioneval.terminal import warning_line

    for line in dict.fromkeys(line for line in lines if line):
        warning_line(err, line)


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
    from visioneval.commands.common import consoles, guarded
    from visioneval.core.rundir import load
    from visioneval.report.page import write_page
    from visioneval.terminal import line

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

    raise typer.Exit(guarded(err, action))


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
    from visioneval.commands.common import consoles, guarded
    from visioneval.commands.runs import list_runs

    console, err = consoles()
    raise typer.Exit(guarded(err, lambda: list_runs(folder, console,
                                                     named_definition(definition),
                                                     page=not no_page)))


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
    import asyncio
    import contextlib
    import time

    from visioneval.commands.common import consoles, guarded
    from visioneval.report.viewer import Served, listen_on, serve
    from visioneval.terminal import line

    console, err = consoles()

    def action() -> int:
        with listen_on(port) as sock:  # a taken port is said before the run is indexed
            started = time.perf_counter()
            served: Served
            if _holds_runs(run_dir):
                from visioneval.report.home import Home

                home = Home(run_dir, named_definition(definition))
                found = home.listing()
                line(console, f"found {len(found)} run{'s' if len(found) != 1 else ''} under "
                              f"{run_dir} in {time.perf_counter() - started:.1f} s")
                served = home
            else:
                from visioneval.report.viewer import Viewer

                viewer = Viewer.open(run_dir, named_definition(definition))
                warn_untrusted(err, [viewer.untrusted, viewer.data_change])
                line(console, f"indexed {len(viewer.index)} samples in "
                              f"{time.perf_counter() - started:.1f} s")
                served = viewer

            def ready(url: str) -> None:
                line(console, f"serving {url} (Ctrl-C to stop)")

            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a user stops it
                asyncio.run(serve(served, sock, ready))
        return 0

    raise typer.Exit(guarded(err, action))


def _holds_runs(folder: Path) -> bool:
    """Whether `view` shows the runs under `folder` rather than one run: a folder that is
    not itself a run directory (no run.json, no journal). A path that is not a folder is
    said by the one-run path, as before."""
    from visioneval.core.store import RUN_FILE, SAMPLES_FILE

    if not folder.is_dir():
        if folder == Path("results"):
            raise FileNotFoundError("no results/ folder here: name a run directory or a "
                                    "folder of runs")
        return False
    return not ((folder / RUN_FILE).exists() or (folder / SAMPLES_FILE).exists())


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
    from visioneval.commands.common import consoles, guarded
    from visioneval.core.rundir import load_all
    from visioneval.report import compare as comparison
    from visioneval.report.compare_console import show as show_comparison
    from visioneval.terminal import line

    console, err = consoles()

    def action() -> int:
        views = load_all(run_dirs, named_definition(definition))
        warn_untrusted(err, [view.untrusted for view in views])
        result = comparison.compare(views, common_only=common_only)
        published = _beside_published(views, reference, reference_model, common_only)
        for flag in result.flags:  # part of the comparison: wrapped like its notes
            line(err, f"warning: {flag}", style="yellow")
        show_comparison(result, console)
        if published is not None:
            from visioneval.report.reference_console import show_beside

            show_beside(published, console)
        from visioneval.report import paired

        tests = paired.paired_comparisons(views)
        paired.show(tests, console)
        if out is not None:
            tested = paired.section(tests)
            for path in comparison.write(result, out, published,
                                         [tested] if tested is not None else []):
                line(console, f"wrote {path}")
            if any(t.results or t.unpaired for t in tests):
                path = paired.write_csv(tests, out / "paired.csv")
                line(console, f"wrote {path}")
        return 0

    raise typer.Exit(guarded(err, action))


def _beside_published(run_dirs: Sequence[Path | OpenedRun], reference: str | None,
                      reference_model: str | None, common_only: bool) -> ReferenceReport | None:
    """compare's --reference part (None when not asked)."""
    from visioneval.report.reference import REFERENCES, beside_paper

    if reference is None:
        if reference_model is not None:
            raise ValueError("--reference-model needs --reference paper")
        return None
    if reference not in REFERENCES:
        raise ValueError(f"--reference {reference!r}: choose from {', '.join(REFERENCES)}")
    note = ("--common-only narrows the table above; the published comparison uses each "
            "run's own metrics (all its samples)") if common_only else ""
    return beside_paper(run_dirs, reference_model, note)


@app.command()
def show(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.", show_default=False)],
    definition: Definition = None,
) -> None:
    """Print every table of a run in the terminal (a run ends with its main table only),
    read from the run directory alone."""
    from visioneval.commands.common import consoles, guarded
    from visioneval.core.rundir import load
    from visioneval.report.shown import show as show_run

    console, err = consoles()

    def action() -> int:
        view = load(run_dir, named_definition(definition))
        warn_untrusted(err, [view.untrusted, view.data_change])
        show_run(view, console)
        return 0

    raise typer.Exit(guarded(err, action))
