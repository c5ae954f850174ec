"""`visioneval merge`: shard run directories (or layout results) back into one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app
from visioneval.cli.options import NoReport


@app.command()
def merge(
    shards: Annotated[list[Path], typer.Argument(
        help="The shard run directories (made with --shard K/N), or the `visioneval layout "
        "--shard` results JSON files.", show_default=False)],
    out: Annotated[Path, typer.Option(help="Folder for the merged run (for layout: the "
                                      "merged results JSON).")],
    allow_partial: Annotated[bool, typer.Option(
        "--allow-partial", help="Merge the shards given even if some are missing or still "
        "running (those are left out; the merged run says which); a --resume of it runs "
        "the missing samples.")] = False,
    definition: Annotated[str | None, typer.Option(
        "--definition", help="Your own benchmark's definition (module:attribute, or "
        "path/to/file.py:attribute), which you trust: merging recomputes the metrics with it. "
        "visioneval never imports code a run directory names, so shards of your own "
        "benchmark are not merged without it.", show_default=False)] = None,
    no_report: NoReport = False,
) -> None:
    """Merge the shards of one run: metrics, tables and report as if it ran in one piece."""
    from visioneval.commands.common import consoles, guarded, setup_logging

    console, err = consoles()
    setup_logging(err, False)

    def action() -> int:
        from visioneval.report.layout import is_layout_results

        if shards and all(is_layout_results(p) for p in shards):
            from visioneval.distributed.layout_merge import merge_layout

            return merge_layout(shards, out, allow_partial, console, err)
        from visioneval.commands.run import Output
        from visioneval.distributed.report import merge_and_report

        return merge_and_report(shards, out, allow_partial,
                                Output(console, err, progress=False, report=not no_report),
                                definition=definition)

    raise typer.Exit(guarded(err, action))
