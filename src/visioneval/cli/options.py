"""Options shared by the commands, and the one flow every run command follows."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from visioneval.cli.panels import CONTROLS, COST, ENGINE, MODEL, OUTPUT, SPREAD
from visioneval.core import defaults

if TYPE_CHECKING:
    from visioneval.commands.flags import Ready, RunFlags, RunTarget


class BackendKind(StrEnum):
    openai = "openai"
    openrouter = "openrouter"
    ollama = "ollama"
    anthropic = "anthropic"
    builtin = "builtin"
    human = "human"


# One line of help each (long explanations are in README.md and docs/); a default the code
# applies (the option itself defaults to None, so a resume can tell "not given") is shown
# with show_default, and tests/test_cli_basics.py checks it against the code's.
BackendOpt = Annotated[BackendKind | None, typer.Option(
    metavar="KIND", help="openai, openrouter, ollama, anthropic, builtin or human.",
    rich_help_panel=MODEL)]


def base_url_option(panel: str = MODEL) -> Any:
    """--base-url (or a judge's): one or several servers of one model."""
    return typer.Option(metavar="URL", help="Server URL; repeat it for replicas.",
                        show_default="the backend's", rich_help_panel=panel)


def api_key_env_option(panel: str = MODEL) -> Any:
    """--api-key-env (or a judge's): the variable whose key goes to the server."""
    return typer.Option(metavar="NAME", help="Variable holding the key.",
                        show_default="a hosted API's own, else none", rich_help_panel=panel)


BaseUrl = Annotated[list[str] | None, base_url_option()]
ApiKeyEnv = Annotated[str | None, api_key_env_option()]
Temperature = Annotated[float | None, typer.Option(
    metavar="NUM", help="Sampling temperature.", show_default="0", rich_help_panel=MODEL)]
Epochs = Annotated[int | None, typer.Option(
    "--epochs", min=1, metavar="K",
    help="Answers per sample: item means, variance split.", show_default="1",
    rich_help_panel=MODEL)]
# --score is hidden to keep --help to a screen; docs/epochs.md describes it.
ScoreOpt = Annotated[str | None, typer.Option(
    "--score", metavar="<sampled|expected>",
    help="expected: also each answer's expected score from its log-probabilities.",
    show_default="sampled", rich_help_panel=MODEL, hidden=True)]
Resume = Annotated[Path | None, typer.Option(
    metavar="DIR", help="Continue the run in DIR with its recorded settings.",
    rich_help_panel=OUTPUT)]
Concurrency = Annotated[int | None, typer.Option(
    min=1, max=defaults.MAX_CONCURRENCY, metavar="N", help="Requests in flight per URL.",
    show_default=defaults.shown(defaults.CONCURRENCY),
    rich_help_panel=ENGINE)]
MaxAttempts = Annotated[int | None, typer.Option(
    min=1, metavar="N", help="Attempts per request before it is an error.",
    show_default=defaults.shown(defaults.MAX_ATTEMPTS), rich_help_panel=ENGINE)]
Timeout = Annotated[float | None, typer.Option(
    min=0.001, metavar="SECONDS", help="Per attempt, and per server check.",
    show_default=defaults.shown(defaults.TIMEOUT_S), rich_help_panel=ENGINE)]
BackoffBase = Annotated[float | None, typer.Option(
    min=0, metavar="SECONDS", help="First retry's wait, doubling up to --backoff-cap.",
    show_default=defaults.shown(defaults.BACKOFF_BASE_S), rich_help_panel=ENGINE)]
BackoffCap = Annotated[float | None, typer.Option(
    min=0, metavar="SECONDS", help="Longest wait between attempts.",
    show_default=defaults.shown(defaults.BACKOFF_CAP_S),
    rich_help_panel=ENGINE)]
Rpm = Annotated[int | None, typer.Option(
    min=1, metavar="N", help="Requests per minute for the model, all URLs.",
    show_default="no limit", rich_help_panel=ENGINE)]
Tpm = Annotated[int | None, typer.Option(
    min=1, metavar="N", help="Tokens per minute for the model (estimated).",
    show_default="no limit", rich_help_panel=ENGINE)]
CacheKeyUrl = Annotated[bool, typer.Option(
    "--cache-key-url", help="Keep cached answers per server URL too.",
    rich_help_panel=ENGINE)]
NoCache = Annotated[bool, typer.Option(
    "--no-cache", help="Neither read nor write the response cache.", rich_help_panel=ENGINE)]
RefreshCache = Annotated[bool, typer.Option(
    "--refresh-cache", help="Ask again; the new answers replace the cached ones.",
    rich_help_panel=ENGINE)]
MaxReplyMb = Annotated[float | None, typer.Option(
    min=0.001, metavar="MB", help="Largest reply read; a bigger one is an error.",
    show_default=defaults.shown(defaults.MAX_REPLY_MB), rich_help_panel=ENGINE)]
CacheDir = Annotated[Path | None, typer.Option(
    metavar="DIR", help="Response cache folder.", show_default="~/.cache/visioneval",
    rich_help_panel=ENGINE)]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Debug logs.",
                                       rich_help_panel=OUTPUT)]
NoProgress = Annotated[bool, typer.Option("--no-progress", help="No progress bar.",
                                          rich_help_panel=OUTPUT)]
NoReport = Annotated[bool, typer.Option(
    "--no-report", help="No report.html (`visioneval report DIR` writes it later).",
    rich_help_panel=OUTPUT)]

PriceIn = Annotated[float | None, typer.Option(
    min=0, metavar="USD", help="Model's USD per million input tokens.",
    show_default="the price table", rich_help_panel=COST)]
PriceOut = Annotated[float | None, typer.Option(
    min=0, metavar="USD", help="Model's USD per million output tokens.",
    show_default="the price table", rich_help_panel=COST)]
JudgePriceIn = Annotated[float | None, typer.Option(
    min=0, metavar="USD", help="Judge's USD per million input tokens.",
    show_default="the price table", rich_help_panel=COST)]
JudgePriceOut = Annotated[float | None, typer.Option(
    min=0, metavar="USD", help="Judge's USD per million output tokens.",
    show_default="the price table", rich_help_panel=COST)]
MaxCost = Annotated[float | None, typer.Option(
    min=0, metavar="USD", help="Stop sending once this session spent this much.",
    show_default="no limit", rich_help_panel=COST)]
Batch = Annotated[bool, typer.Option(
    "--batch", help="Use the batch API: half price, answers within 24 h.",
    rich_help_panel=COST)]
# --min-samples is hidden to keep --help to a screen; docs/stopping.md describes it.
TargetCi = Annotated[float | None, typer.Option(
    min=0.001, max=100, metavar="W",
    help="Stop at a 95% interval W points wide (after --min-samples, 100).",
    rich_help_panel=COST)]
MinSamples = Annotated[int | None, typer.Option(
    min=1, metavar="N", help="Samples before --target-ci may stop the run.",
    show_default="100", rich_help_panel=COST, hidden=True)]
DryRun = Annotated[bool, typer.Option(
    "--dry-run", help="Send nothing: print requests, tokens and the cost range.",
    rich_help_panel=COST)]

VariantOpt = Annotated[list[str] | None, typer.Option(
    "--variant", metavar="NAME[:ARGS]",
    help="Also sent as: blind, blank, grayscale, jpeg:Q, scale:F, max-side:N.",
    rich_help_panel=CONTROLS)]
ProbeResolution = Annotated[bool, typer.Option(
    "--probe-resolution", help="First measure what the endpoint does to image size.",
    rich_help_panel=CONTROLS)]
ShardOpt = Annotated[str | None, typer.Option(
    "--shard", metavar="K/N", help="Run shard K of N; `visioneval merge` joins them.",
    rich_help_panel=SPREAD)]
ExecutorOpt = Annotated[str, typer.Option(
    "--executor", metavar="<local|ray>", help="ray: run the shards as Ray tasks, then merge.",
    rich_help_panel=SPREAD)]
ShardsOpt = Annotated[int | None, typer.Option(
    "--shards", min=1, metavar="N", help="Shards for --executor ray.",
    show_default="4", rich_help_panel=SPREAD)]
RayAddressOpt = Annotated[str | None, typer.Option(
    "--ray-address", metavar="ADDRESS", help="Ray cluster: ray://head:10001 or auto.",
    show_default="a local Ray", rich_help_panel=SPREAD)]


def run_command(flags: RunFlags, target: RunTarget | Callable[[], Ready]) -> None:
    """Every run command's end: its body (`commands.perform.run_flags`) and its exit code."""
    # a run's module: `visioneval --help` loads none
    from visioneval.commands.perform import run_flags

    raise typer.Exit(run_flags(flags, target))
