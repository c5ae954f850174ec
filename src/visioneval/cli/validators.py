"""`visioneval validate`: run one code validator on a JSON payload (the validators' own
command-line protocol).

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from typing import Annotated

import typer

from visioneval.cli.app import app


@app.command()
def validate(
    name: Annotated[str, typer.Argument(help="count, ocr, json or chart.")],
    payload: Annotated[str | None, typer.Argument(
        help='JSON with "output", "expected_output", "input" and options; default: stdin.')
                       ] = None,
) -> None:
    """Run a code validator: result JSON on stdout; exit 0 passed, 1 failed, 2 error."""
    from visioneval.commands.validate import validate as command

    raise typer.Exit(command(name, payload))
