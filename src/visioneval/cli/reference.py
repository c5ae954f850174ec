"""`visioneval reference`: a benchmark's published numbers, with where they come from."""

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
    from visioneval.commands.common import consoles, guarded
    from visioneval.core import registry
    from visioneval.report.reference import published_table, unknown_model
    from visioneval.report.reference_console import show_published

    console, err = consoles()

    def action() -> int:
        table = published_table(registry.definition(benchmark))
        chosen = None
        if model is not None:
            chosen = table.find_model(model)
            if chosen is None:
                raise unknown_model(table, model, "--model")
        show_published(table, console, chosen)
        return 0

    raise typer.Exit(guarded(err, action))
