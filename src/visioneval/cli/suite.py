"""`visioneval suite`: several benchmarks x models (x settings) in one command.

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app
from visioneval.cli.options import (
    ENGINE,
    MODEL,
    ApiKeyEnv,
    BackendOpt,
    BaseUrl,
    NoProgress,
    NoReport,
    PriceIn,
    PriceOut,
    Verbose,
)
from visioneval.cli.panels import COST, OUTPUT
from visioneval.core import defaults


@app.command()
def suite(
    file: Annotated[Path | None, typer.Argument(
        help="The suite file (TOML: [[models]], [[benchmarks]], optional [engine]; see "
        "docs/suites.md and examples/suites/).", show_default=False)] = None,
    benchmarks: Annotated[str | None, typer.Option(
        help="Instead of a file: these benchmarks (comma-separated) on the model of "
        "--backend and --model.", rich_help_panel=MODEL)] = None,
    backend: BackendOpt = None,
    model: Annotated[str | None, typer.Option(help="With --benchmarks: the model.",
                                              rich_help_panel=MODEL)] = None,
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = None,
    option: Annotated[list[str] | None, typer.Option(
        "--option", "-o", help="With --benchmarks: a benchmark's option as "
        "benchmark.option=value (repeat; lists comma-separated).", rich_help_panel=MODEL)
                      ] = None,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
    concurrency: Annotated[int | None, typer.Option(
        min=1, max=defaults.MAX_CONCURRENCY,
        help="With --benchmarks: requests in flight per URL.",
        show_default=defaults.shown(defaults.CONCURRENCY),
        rich_help_panel=ENGINE)] = None,
    out: Annotated[Path | None, typer.Option(
        help="The suite's folder.", show_default="the file's out, else results/suites/<name>",
        rich_help_panel=OUTPUT)] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print every run's requests and cost range, and the totals; send "
        "nothing, write nothing.", rich_help_panel=COST)] = False,
    no_progress: NoProgress = False,
    no_report: NoReport = False,
    verbose: Verbose = False,
) -> None:
    """Run a whole evaluation: several benchmarks (with their options and settings that
    vary, such as shots) on several models, each an ordinary run directory, with one
    comparison page across them. The same command again resumes what is not finished."""
    from visioneval.commands.suite import suite as command

    raise typer.Exit(command(
        file, benchmarks=benchmarks, backend=backend, model=model, base_url=base_url,
        api_key_env=api_key_env, options=option, price_in=price_in, price_out=price_out,
        concurrency=concurrency, out=out, dry_run=dry_run, progress=not no_progress,
        report=not no_report, verbose=verbose))
