"""`visioneval evaluate`: eval cases graded by rubric judges and code validators; the
definition registers it (`HasCommand`), with its own --judge-* flag spellings."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.options import (
    BackendKind,
    BackoffBase,
    BackoffCap,
    CacheDir,
    CacheKeyUrl,
    Concurrency,
    DryRun,
    ExecutorOpt,
    MaxAttempts,
    MaxCost,
    MaxReplyMb,
    NoCache,
    NoProgress,
    NoReport,
    PriceIn,
    PriceOut,
    RayAddressOpt,
    RefreshCache,
    Resume,
    Rpm,
    ShardOpt,
    ShardsOpt,
    Timeout,
    Tpm,
    Verbose,
    api_key_env_option,
    base_url_option,
    run_command,
)
from visioneval.cli.panels import JUDGE, OUTPUT

_OWN = "evaluate options"


def evaluate(
    cases: Annotated[Path | None, typer.Argument(help="YAML or JSONL file of eval cases.")
                     ] = None,
    validator_timeout: Annotated[float | None, typer.Option(
        min=0.1, metavar="S", help="Seconds per validator run (a case's `timeout` wins).",
        show_default="30", rich_help_panel=_OWN)] = None,
    allow_scripts: Annotated[bool, typer.Option(
        "--allow-scripts", help="Run the case file's `script:` evaluators (trusted files).",
        rich_help_panel=_OWN)] = False,
    allow_outside_images: Annotated[bool, typer.Option(
        "--allow-outside-images", help="Send case images from outside the case file's folder.",
        rich_help_panel=_OWN)] = False,
    judge_backend: Annotated[BackendKind | None, typer.Option(
        metavar="KIND", help="openai, openrouter, ollama, anthropic or builtin.",
        rich_help_panel=JUDGE)] = None,
    judge_model: Annotated[str | None, typer.Option(
        metavar="NAME", help="A vision-capable model (needed when a case uses a judge).",
        rich_help_panel=JUDGE)] = None,
    judge_base_url: Annotated[list[str] | None, base_url_option(JUDGE)] = None,
    judge_api_key_env: Annotated[str | None, api_key_env_option(JUDGE)] = None,
    judge_samples: Annotated[int | None, typer.Option(
        min=1, metavar="N", help="Judge calls per case (mean and spread per dimension).",
        show_default="1", rich_help_panel=JUDGE)] = None,
    judge_temperature: Annotated[float | None, typer.Option(
        metavar="NUM", help="Sampling temperature.", show_default="0; 0.7 for several samples",
        rich_help_panel=JUDGE)] = None,
    judge_max_tokens: Annotated[int | None, typer.Option(
        min=1, metavar="N", help="Most tokens a verdict may have.", show_default="1024",
        rich_help_panel=JUDGE)] = None,
    judge_text_only: Annotated[bool, typer.Option(
        "--judge-text-only", help="The judge is text-only: cases it must see are refused.",
        rich_help_panel=JUDGE)] = False,
    out: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Run directory.", show_default="results/evaluate-<judge>-<time>",
        rich_help_panel=OUTPUT)] = None,
    resume: Resume = None,
    concurrency: Concurrency = None,
    max_attempts: MaxAttempts = None,
    timeout: Timeout = None,
    backoff_base: BackoffBase = None,
    backoff_cap: BackoffCap = None,
    rpm: Rpm = None,
    tpm: Tpm = None,
    no_cache: NoCache = False,
    cache_dir: CacheDir = None,
    refresh_cache: RefreshCache = False,
    cache_key_url: CacheKeyUrl = False,
    max_reply_mb: MaxReplyMb = None,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
    max_cost: MaxCost = None,
    dry_run: DryRun = False,
    no_progress: NoProgress = False,
    no_report: NoReport = False,
    verbose: Verbose = False,
    shard: ShardOpt = None,
    executor: ExecutorOpt = "local",
    shards: ShardsOpt = None,
    ray_address: RayAddressOpt = None,
) -> None:
    """Grade free-form answers about images with rubric judges and code validators."""

    samples = 1 if judge_samples is None else judge_samples
    max_tokens = 1024 if judge_max_tokens is None else judge_max_tokens

    def benchmark():
        from visioneval.evaluators.evaluate import EvaluateOptions, build

        if cases is None:
            raise ValueError("give the cases file (or --resume RUN_DIR)")
        run = build(EvaluateOptions(
            cases=str(cases.resolve()), judge_samples=samples,
            judge_temperature=judge_temperature, judge_max_tokens=max_tokens,
            judge_text_only=judge_text_only,
            validator_timeout_s=30.0 if validator_timeout is None else validator_timeout,
            allow_scripts=allow_scripts, allow_outside_images=allow_outside_images))
        if run.needs_judge and (judge_backend is None or judge_model is None):
            raise ValueError(f"{cases} uses judges: give --judge-backend and --judge-model "
                             "(a vision-capable model)")
        return run

    def settings():
        from visioneval.evaluators.evaluate import EvaluateOptions

        return EvaluateOptions(cases=str(cases), judge_samples=samples,
                               judge_temperature=judge_temperature,
                               judge_max_tokens=max_tokens).judge_settings()

    # What a resume refuses (it continues with what the run recorded) and what it takes.
    given = {"cases": cases, "--judge-backend": judge_backend, "--judge-model": judge_model,
             "--judge-samples": judge_samples, "--judge-temperature": judge_temperature,
             "--judge-max-tokens": judge_max_tokens, "--validator-timeout": validator_timeout,
             "--judge-text-only": judge_text_only or None, "--out": out}
    fixed = [name for name, value in given.items() if value is not None]
    trust = {k: True for k, v in (("allow_scripts", allow_scripts),
                                  ("allow_outside_images", allow_outside_images)) if v}
    from visioneval.commands.flags import RunFlags, RunTarget

    flags = RunFlags(
        backend=judge_backend, model=judge_model, base_url=judge_base_url,
        api_key_env=judge_api_key_env, out=out, resume=resume, concurrency=concurrency,
        max_attempts=max_attempts, timeout=timeout, backoff_base=backoff_base,
        backoff_cap=backoff_cap, rpm=rpm, tpm=tpm, no_cache=no_cache, cache_dir=cache_dir,
        refresh_cache=refresh_cache, cache_key_url=cache_key_url, max_reply_mb=max_reply_mb,
        price_in=price_in, price_out=price_out, max_cost=max_cost, dry_run=dry_run,
        no_progress=no_progress, no_report=no_report, verbose=verbose, shard=shard,
        executor=executor, shards=shards, ray_address=ray_address)
    run_command(flags, RunTarget("evaluate", benchmark, settings, backend_required=False,
                                 fixed=fixed, resume_options=trust))

