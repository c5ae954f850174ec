"""`visioneval merge`: shard run directories back into one. Each command imports its body
from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app
from visioneval.cli.options import NoReport
from visioneval.cli.panels import OUTPUT


@app.command()
def merge(
    shards: Annotated[list[Path], typer.Argument(
        help="Shard run directories.",
        show_default=False)],
    out: Annotated[Path, typer.Option(metavar="DIR", help="The merged run.",
                                      rich_help_panel=OUTPUT)],
    allow_partial: Annotated[bool, typer.Option(
        "--allow-partial", help="Merge even if some shards are missing or running.")
    ] = False,
    definition: Annotated[str | None, typer.Option(
        "--definition", metavar="MODULE:ATTR", help="Your own benchmark's definition, "
        "trusted.", show_default=False)] = None,
    no_report: NoReport = False,
) -> None:
    """Merge the shards of one run: metrics, tables and report as if it ran in one piece."""
    from visioneval.commands.merge import merge_command as command

    raise typer.Exit(command(shards, out, allow_partial=allow_partial, definition=definition,
                             report=not no_report))
