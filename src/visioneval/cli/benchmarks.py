"""Every registered benchmark's command (generated from its definition) and `demo`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app, data_app
from visioneval.cli.generated import register, settings
from visioneval.cli.options import NoProgress, NoReport, Verbose, run_command
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
    from visioneval.commands.common import consoles
    from visioneval.commands.flags import RunFlags, RunTarget
    from visioneval.core import registry
    from visioneval.core.capabilities import HasDemo
    from visioneval.engine.cache import default_cache_path
    from visioneval.terminal import line, print_command

    definition = registry.definition(registry.DEMO)
    assert isinstance(definition, HasDemo), f"{registry.DEMO} has no demo"
    said = []

    def benchmark():
        demo = definition.demo(default_cache_path().parent, n, seed)
        line(consoles()[1], demo.before)
        said.append(demo)
        return demo.benchmark

    try:
        run_command(RunFlags(backend="builtin", model=definition.demo_model, out=out,
                             no_cache=True, no_progress=no_progress, no_report=no_report,
                             verbose=verbose),
                    RunTarget(definition.name, benchmark, lambda: settings(
                        0, definition.max_tokens, definition.max_tokens)))
    finally:
        for shown in said:
            if shown.then:
                print_command(consoles()[0], shown.after, shown.then)
            else:
                line(consoles()[0], shown.after)
