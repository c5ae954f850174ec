"""Options shared by the commands, and the one flow every benchmark command follows."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from visioneval.benchmarks.base import Benchmark
    from visioneval.records import GenerationSettings
    from visioneval.session import EngineOptions

ENGINE = "Engine"
MODEL = "Model"
DATA = "Data"


class BackendKind(StrEnum):
    openai = "openai"
    openrouter = "openrouter"
    ollama = "ollama"
    anthropic = "anthropic"
    builtin = "builtin"


BackendOpt = Annotated[BackendKind | None, typer.Option(help="Where the model runs.",
                                                        rich_help_panel=MODEL)]
BaseUrl = Annotated[list[str] | None, typer.Option(
    metavar="URL",
    help="Server URL (openai: https://api.openai.com/v1; openrouter: https://openrouter.ai/"
    "api/v1; ollama: http://localhost:11434). Repeat it (or give a comma list) for replicas "
    "of one model: each gets --concurrency requests, the least busy gets the next one, one "
    "that stops answering is left out until it answers again. With --resume: the URLs that "
    "held credentials, again.", rich_help_panel=MODEL)]
ApiKeyEnv = Annotated[str | None, typer.Option(help="Environment variable whose key is sent "
                                               "to --base-url. Default: OPENAI_API_KEY only "
                                               "to api.openai.com, OPENROUTER_API_KEY only "
                                               "to openrouter.ai, ANTHROPIC_API_KEY only to "
                                               "api.anthropic.com; no key elsewhere.",
                                               rich_help_panel=MODEL)]
Temperature = Annotated[float, typer.Option(rich_help_panel=MODEL)]
Resume = Annotated[Path | None, typer.Option(help="Continue the run in this directory with "
                                             "its recorded settings.")]
Concurrency = Annotated[int, typer.Option(min=1, help="Requests in flight.",
                                          rich_help_panel=ENGINE)]
MaxAttempts = Annotated[int, typer.Option(min=1, help="Attempts per request before it is "
                                          "recorded as an error.", rich_help_panel=ENGINE)]
Timeout = Annotated[float, typer.Option(min=0.001, help="Seconds per attempt.",
                                        rich_help_panel=ENGINE)]
BackoffBase = Annotated[float, typer.Option(min=0, help="First retry waits about this many "
                                            "seconds, doubling up to --backoff-cap.",
                                            rich_help_panel=ENGINE)]
BackoffCap = Annotated[float, typer.Option(min=0, help="Longest wait between attempts "
                                           "(a server's Retry-After is honoured).",
                                           rich_help_panel=ENGINE)]
Rpm = Annotated[int | None, typer.Option(min=1, help="At most this many requests per minute "
                                        "for the model, over all its URLs.",
                                        rich_help_panel=ENGINE)]
Tpm = Annotated[int | None, typer.Option(min=1, help="At most this many tokens per minute for "
                                        "the model (estimated before sending: text / 4, "
                                        "images, max tokens; corrected by the usage the "
                                        "server reports).", rich_help_panel=ENGINE)]
CacheKeyUrl = Annotated[bool, typer.Option("--cache-key-url", help="Put the server URL in "
                                           "the cache key (by default the key names the "
                                           "backend and model, so replicas share answers).",
                                           rich_help_panel=ENGINE)]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Send every request even if an "
                                       "identical one is cached.", rich_help_panel=ENGINE)]
CacheDir = Annotated[Path | None, typer.Option(help="Response cache folder (default "
                                               "~/.cache/visioneval).", rich_help_panel=ENGINE)]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Debug logs.")]
NoProgress = Annotated[bool, typer.Option("--no-progress", help="No progress bar.")]
NoReport = Annotated[bool, typer.Option("--no-report", help="Do not write report.html at the "
                                        "end (`visioneval report RUN_DIR` writes it later).")]


def engine_options(concurrency: int, max_attempts: int, timeout: float, backoff_base: float,
                   backoff_cap: float, no_cache: bool, cache_dir: Path | None,
                   rpm: int | None = None, tpm: int | None = None,
                   cache_key_url: bool = False) -> EngineOptions:
    from visioneval.engine.cache import default_cache_path
    from visioneval.session import EngineOptions

    cache = None if no_cache else (
        cache_dir / "responses.sqlite3" if cache_dir else default_cache_path())
    return EngineOptions(concurrency=concurrency, max_attempts=max_attempts, timeout_s=timeout,
                         backoff_base_s=backoff_base, backoff_cap_s=backoff_cap,
                         cache_path=cache, rpm=rpm, tpm=tpm, cache_key_url=cache_key_url)


def run_command(name: str, *, resume: Path | None, engine: Callable[[], EngineOptions],
                backend: str | None, model: str | None, base_url: list[str] | None,
                api_key_env: str | None, settings: Callable[[], GenerationSettings],
                benchmark: Callable[[], Benchmark], out: Path | None, verbose: bool,
                no_progress: bool, no_report: bool = False,
                backend_required: bool = True, definition: str | None = None,
                any_benchmark: bool = False) -> None:
    """The flow of every benchmark command: logging, errors as one line with exit 2,
    resume from the run directory, or build the benchmark and the backend and run."""
    from visioneval.commands import run as command
    from visioneval.commands.common import consoles, guarded, setup_logging

    console, err = consoles()
    setup_logging(err, verbose)
    output = command.Output(console, err, progress=not no_progress, report=not no_report)

    def action() -> int:
        if resume is not None:
            return command.resume(resume, None if any_benchmark else name, engine(), output,
                                  base_url=base_url)
        from visioneval.backends.registry import BackendSpec

        if backend is None or model is None:
            if backend_required:
                raise ValueError("--backend and --model are required (or --resume RUN_DIR)")
            spec = BackendSpec(kind="none", model="none")
        else:
            spec = BackendSpec(kind=backend, model=model, base_url=base_url,
                               api_key_env=api_key_env)
        return command.run(benchmark(), spec, settings(), engine(), out, output, definition)

    raise typer.Exit(guarded(err, action))
