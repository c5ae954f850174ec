"""`visioneval list`: the benchmarks, builtin models, request variants and backends."""

from __future__ import annotations

import typer

from visioneval.cli.app import app


@app.command(name="list")
def list_() -> None:
    """List what this visioneval has: benchmarks, builtin models (and the benchmarks each
    fits), request variants and backends, one line each."""
    from visioneval.commands.common import consoles, guarded
    from visioneval.commands.listing import listing, show

    console, err = consoles()

    def action() -> int:
        show(listing(), console)
        return 0

    raise typer.Exit(guarded(err, action))
