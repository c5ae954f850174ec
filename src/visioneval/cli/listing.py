"""`visioneval list`: the benchmarks, builtin models, request variants and backends.

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

import typer

from visioneval.cli.app import app


@app.command(name="list")
def list_() -> None:
    """List what this visioneval has: benchmarks, builtin models (and the benchmarks each
    fits), request variants and backends, one line each."""
    from visioneval.commands.listing import list_ as command

    raise typer.Exit(command())
