"""`visioneval validate`: run one code validator on a JSON payload (the validators' own
command-line protocol)."""

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
    import importlib

    from visioneval.validators import BUILTIN
    from visioneval.validators.protocol import main
    from visioneval.validators.result import EvalResult

    if name not in BUILTIN:
        result = EvalResult.error(f"unknown validator {name!r}; built-in: {', '.join(BUILTIN)}")
        typer.echo(result.model_dump_json())
        raise typer.Exit(2)
    module = importlib.import_module(f"visioneval.validators.{name}")
    raise typer.Exit(main(module.validate, [payload] if payload is not None else []))
