"""`visioneval reference`: a benchmark's published numbers, with where they come from.

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from typing import Annotated

import typer

from visioneval.cli.app import app


@app.command()
def reference(
    benchmark: Annotated[str, typer.Argument(help="A benchmark with published numbers.",
                                             show_default=False)],
    model: Annotated[str | None, typer.Option(metavar="NAME", help="Only this model's rows "
                                              "(any spelling).")] = None,
) -> None:
    """Print a benchmark's published results (the paper's or its authors' leaderboard) with
    their source, version and what each number means."""
    from visioneval.commands.reference import reference as command

    raise typer.Exit(command(benchmark, model))
