"""`visioneval power`: how many samples a comparison of two models needs.

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app
from visioneval.cli.panels import OUTPUT


@app.command()
def power(
    run_dirs: Annotated[list[Path] | None, typer.Argument(
        help="Pilot runs: one gives the baseline accuracy, two on the same samples the "
             "discordance.", show_default=False)] = None,
    n: Annotated[int | None, typer.Option(
        "--n", metavar="N", help="Samples planned: find the smallest detectable difference.",
        show_default="the pilot run's samples")] = None,
    difference: Annotated[float | None, typer.Option(
        metavar="D", help="Target difference as a share (0.05: 5 points): find the samples "
        "it needs.")] = None,
    alpha: Annotated[float, typer.Option(metavar="A", help="Two-sided significance level.")
                     ] = 0.05,
    power_: Annotated[float, typer.Option("--power", metavar="P", help="Power wanted.")
                      ] = 0.8,
    baseline: Annotated[float | None, typer.Option(
        metavar="P0", help="The first model's accuracy as a share, without a pilot run.")
                        ] = None,
    discordance: Annotated[float | None, typer.Option(
        metavar="R", help="Share of samples where the two models differ (one right, one "
        "wrong).", show_default="2 P0 (1 - P0), independent errors")] = None,
    unpaired: Annotated[bool, typer.Option(
        "--unpaired", help="The models answer different samples (two-proportion z-test); "
        "the default pairs them (McNemar).")] = False,
    metric: Annotated[str | None, typer.Option(
        metavar="NAME", help="Only this metric of the pilot runs.",
        show_default="every 0/1 metric")] = None,
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the figures as JSON.", rich_help_panel=OUTPUT)] = False,
) -> None:
    """Power analysis: the smallest accuracy difference a run of N samples detects, or the
    samples a target difference needs (paired: McNemar; --unpaired: two proportions)."""
    from visioneval.commands.power import power as command

    raise typer.Exit(command(run_dirs or [], n=n, difference=difference, alpha=alpha,
                             power_wanted=power_, baseline=baseline, discordance=discordance,
                             unpaired=unpaired, metric=metric, json_out=json_out))
