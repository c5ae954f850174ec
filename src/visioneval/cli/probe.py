"""`visioneval probe`: measure what an endpoint does to images before its model looks.

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from typing import Annotated

import typer

from visioneval.cli.app import WrappedGroup, app
from visioneval.cli.options import (
    ApiKeyEnv,
    BackendOpt,
    BaseUrl,
    MaxAttempts,
    NoProgress,
    Timeout,
)
from visioneval.cli.panels import MODEL, OUTPUT, PanelTyper
from visioneval.core import defaults

probe_app = PanelTyper(cls=WrappedGroup, no_args_is_help=True, rich_markup_mode=None,
                       help="Measure what an endpoint does to images before its model looks.")
app.add_typer(probe_app, name="probe")


@probe_app.command()
def resolution(
    backend: BackendOpt = None,
    model: Annotated[str | None, typer.Option(help="The model to probe.",
                                              rich_help_panel=MODEL)] = None,
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = None,
    long_side: Annotated[int, typer.Option(
        min=128, max=8192, metavar="PX", help="Side of the square stripe images sent.")
                         ] = 2048,
    levels: Annotated[int, typer.Option(
        min=2, max=64, help="Period bands from 2 to 64 pixels.")] = 16,
    trials: Annotated[int, typer.Option(
        min=1, max=100, help="Stripe images per band (requests: bands x trials).")] = 10,
    seed: Annotated[int, typer.Option(help="Seed of periods, orientations and phases.")] = 0,
    max_tokens: Annotated[int, typer.Option(
        min=1, help="Most tokens per answer.", rich_help_panel=MODEL)] = 128,
    concurrency: Annotated[int, typer.Option(
        min=1, max=defaults.MAX_CONCURRENCY, help="Requests in flight.")] = 8,
    max_attempts: MaxAttempts = None,
    timeout: Timeout = None,
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the estimate as JSON (every band's counts too).",
        rich_help_panel=OUTPUT)] = False,
    no_progress: NoProgress = False,
) -> None:
    """Estimate the resolution a model effectively sees: send stripes of known period
    (horizontal or vertical) on a large canvas, ask which way they run, and fit proportion
    correct against period. The default is 160 requests."""
    from visioneval.commands.probe import resolution as command

    raise typer.Exit(command(
        backend=None if backend is None else backend.value, model=model, base_url=base_url,
        api_key_env=api_key_env, long_side=long_side, levels=levels, trials=trials, seed=seed,
        max_tokens=max_tokens, concurrency=concurrency, max_attempts=max_attempts,
        timeout=timeout, json_out=json_out, progress=not no_progress))
