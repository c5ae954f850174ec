"""Options shared by the commands, and the one flow every benchmark command follows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from visioneval.cli.panels import COST, ENGINE, MODEL, OUTPUT, SPREAD
from visioneval.engine import defaults

if TYPE_CHECKING:
    from visioneval.commands.run import Output
    from visioneval.core.benchmark import Benchmark
    from visioneval.core.records import GenerationSettings
    from visioneval.distributed.options import Distribution
    from visioneval.engine.options import EngineFlags


class BackendKind(StrEnum):
    openai = "openai"
    openrouter = "openrouter"
    ollama = "ollama"
    anthropic = "anthropic"
    builtin = "builtin"


# One line of help each (long explanations are in README.md and docs/); a default the code
# applies (the option itself defaults to None, so a resume can tell "not given") is shown
# with show_default, and tests/test_cli_basics.py checks it against the code's.
BackendOpt = Annotated[BackendKind | None, typer.Option(
    metavar="KIND", help="openai, openrouter, ollama, anthropic or builtin.",
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
Resume = Annotated[Path | None, typer.Option(
    metavar="DIR", help="Continue the run in DIR with its recorded settings.",
    rich_help_panel=OUTPUT)]
Concurrency = Annotated[int | None, typer.Option(
    min=1, metavar="N", help="Requests in flight per URL.",
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
MaxCost = Annotated[float | None, typer.Option(
    min=0, metavar="USD", help="Stop sending once this session spent this much.",
    show_default="no limit", rich_help_panel=COST)]
DryRun = Annotated[bool, typer.Option(
    "--dry-run", help="Send nothing: print requests, tokens and the cost range.",
    rich_help_panel=COST)]

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


def distribution(shard: str | None, executor: str, shards: int | None,
                 ray_address: str | None) -> Distribution:
    from visioneval.distributed.options import Distribution

    return Distribution.from_flags(shard, executor, shards, ray_address)


def engine_flags(concurrency: int | None = None, max_attempts: int | None = None,
                 timeout: float | None = None, backoff_base: float | None = None,
                 backoff_cap: float | None = None, no_cache: bool = False,
                 cache_dir: Path | None = None, rpm: int | None = None, tpm: int | None = None,
                 cache_key_url: bool = False, price_in: float | None = None,
                 price_out: float | None = None, max_cost: float | None = None,
                 refresh_cache: bool = False, max_reply_mb: float | None = None
                 ) -> EngineFlags:
    """The engine flags as given (None: not given; a new run then takes the default, a
    resume what the run recorded); a bad combination is a ValueError naming the flags."""
    from pydantic import ValidationError

    from visioneval.engine.options import EngineFlags

    try:
        return EngineFlags(concurrency=concurrency, max_attempts=max_attempts,
                           timeout_s=timeout, backoff_base_s=backoff_base,
                           backoff_cap_s=backoff_cap, rpm=rpm, tpm=tpm, no_cache=no_cache,
                           cache_dir=cache_dir, refresh_cache=refresh_cache,
                           cache_key_url=cache_key_url, price_in=price_in,
                           price_out=price_out, max_cost=max_cost, max_reply_mb=max_reply_mb)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ValueError(str(error["ctx"]["error"]) if error["type"] == "value_error"
                         else f"--{str(error['loc'][0]).replace('_', '-')}: {error['msg']}"
                         ) from None


def run_command(name: str, *, resume: Path | None, engine: Callable[[], EngineFlags],
                backend: str | None, model: str | None, base_url: list[str] | None,
                api_key_env: str | None, settings: Callable[[], GenerationSettings],
                benchmark: Callable[[], Benchmark], out: Path | None, verbose: bool,
                no_progress: bool, no_report: bool = False,
                backend_required: bool = True, definition: str | None = None,
                any_benchmark: bool = False,
                spread: Callable[[], Distribution] | None = None,
                dry_run: bool = False, fixed: Sequence[str] = (),
                resume_options: Mapping[str, Any] | None = None) -> None:
    """The flow of every benchmark command: logging, errors as one line with exit 2,
    resume from the run directory, or build the benchmark and the backend and run;
    `dry_run`: only print what the run (or the resume) would send and cost. With a resume,
    `fixed` names the flags given that only a new run takes (refused), `resume_options` the
    benchmark options given again that a resume takes (a judge's server, --allow-scripts)."""
    from visioneval.commands import run as command
    from visioneval.commands.common import consoles, guarded, setup_logging

    console, err = consoles()
    setup_logging(err, verbose)
    output = command.Output(console, err, progress=not no_progress, report=not no_report)

    def action() -> int:
        how = spread() if spread is not None else None
        if how is not None and how.on_ray and engine().max_cost is not None and not dry_run:
            raise ValueError("--max-cost limits one process's session; with --executor ray "
                             "every shard would get the whole limit: run the shards with "
                             "--shard K/N and a --max-cost each instead")
        if resume is not None and fixed:
            raise ValueError(f"{', '.join(fixed)}: {'is' if len(fixed) == 1 else 'are'} "
                             f"recorded in {resume}, and --resume continues with what it "
                             "recorded; drop the flag, or start a new run to change it")
        if dry_run:
            return _dry_run(name, resume, engine, backend, model, base_url, api_key_env,
                            settings, benchmark, backend_required, any_benchmark, how,
                            output, definition)
        if resume is not None:
            from visioneval.commands.resume import ResumeGiven
            from visioneval.commands.resume import resume as resume_run

            if how is not None and how.shard is not None:
                raise ValueError("--shard is recorded in the run; --resume continues the same "
                                 "shard without it")
            given = ResumeGiven.from_flags(engine(), base_url, api_key_env, definition,
                                           resume_options)
            if how is not None and how.on_ray:
                from visioneval.distributed.ray_runner import resume as resume_on_ray

                return resume_on_ray(resume, None if any_benchmark else name, given, output,
                                     how)
            return resume_run(resume, None if any_benchmark else name, given, output)
        spec = _backend_spec(backend, model, base_url, api_key_env, backend_required)
        if how is not None and how.on_ray:
            from visioneval.distributed.ray_runner import run as run_on_ray

            return run_on_ray(benchmark(), spec, settings(), engine().new_run(), out, output,
                              how, definition)
        return command.run(benchmark(), spec, settings(), engine().new_run(), out, output,
                           definition, how.shard if how is not None else None)

    raise typer.Exit(guarded(err, action))


def _dry_run(name: str, resume: Path | None, engine: Callable[[], EngineFlags],
             backend: str | None, model: str | None, base_url: list[str] | None,
             api_key_env: str | None, settings: Callable[[], GenerationSettings],
             benchmark: Callable[[], Benchmark], backend_required: bool,
             any_benchmark: bool, how: Distribution | None, output: Output,
             definition: str | None = None) -> int:
    """--dry-run: the estimate of a new run (of --shard K/N) or of what a resume would send;
    --executor ray changes where a run goes, not what it sends."""
    from visioneval.commands import dryrun

    if resume is not None:
        return dryrun.dry_run_resume(resume, None if any_benchmark else name,
                                     engine().new_run(), output, definition)
    spec = _backend_spec(backend, model, base_url, api_key_env, backend_required)
    return dryrun.dry_run(benchmark(), spec, settings(), engine().new_run(), output,
                          how.shard if how is not None else None)


def _backend_spec(backend: str | None, model: str | None, base_url: list[str] | None,
                  api_key_env: str | None, backend_required: bool):
    """The model from the flags; a command whose benchmark may need none (evaluate with
    validators only) gets the "none" backend."""
    from visioneval.backends.registry import BackendSpec

    if backend is None or model is None:
        if backend_required:
            raise ValueError("--backend and --model are required (or --resume RUN_DIR)")
        return BackendSpec(kind="none", model="none")
    return BackendSpec(kind=backend, model=model, base_url=base_url, api_key_env=api_key_env)
