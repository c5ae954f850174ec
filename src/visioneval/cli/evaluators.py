"""`visioneval evaluate` (eval cases graded by judges and validators) and `validate`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app
from visioneval.cli.options import (
    MODEL,
    ApiKeyEnv,
    BackendKind,
    BackoffBase,
    BackoffCap,
    BaseUrl,
    CacheDir,
    CacheKeyUrl,
    Concurrency,
    DryRun,
    ExecutorOpt,
    MaxAttempts,
    MaxCost,
    NoCache,
    NoProgress,
    NoReport,
    PriceIn,
    PriceOut,
    RayAddressOpt,
    Resume,
    Rpm,
    ShardOpt,
    ShardsOpt,
    Timeout,
    Tpm,
    Verbose,
    distribution,
    engine_options,
    run_command,
)


@app.command()
def evaluate(
    cases: Annotated[Path | None, typer.Argument(help="YAML or JSONL file of eval cases.")
                     ] = None,
    judge_backend: Annotated[BackendKind | None, typer.Option(
        help="Where the judge model runs (needed when a case uses a judge).",
        rich_help_panel=MODEL)] = None,
    judge_model: Annotated[str | None, typer.Option(help="A vision-capable judge model.",
                                                    rich_help_panel=MODEL)] = None,
    judge_base_url: BaseUrl = None,
    judge_api_key_env: ApiKeyEnv = None,
    judge_samples: Annotated[int, typer.Option(min=1, help="Judge calls per case; the report "
                                               "gives mean and spread per dimension.",
                                               rich_help_panel=MODEL)] = 1,
    judge_temperature: Annotated[float | None, typer.Option(
        help="Default 0 for one sample, 0.7 for several.", rich_help_panel=MODEL)] = None,
    judge_max_tokens: Annotated[int, typer.Option(min=1, rich_help_panel=MODEL)] = 1024,
    judge_text_only: Annotated[bool, typer.Option(
        "--judge-text-only", help="Declare the judge model text-only: cases whose judge must "
        "see images are refused.", rich_help_panel=MODEL)] = False,
    validator_timeout: Annotated[float, typer.Option(min=0.1, help="Seconds per validator "
                                                     "run (a case's `timeout` wins).")] = 30.0,
    allow_scripts: Annotated[bool, typer.Option(
        "--allow-scripts", help="Run the case file's `script:` evaluators (any command the "
        "file names runs with your permissions: use only case files you trust).")] = False,
    allow_outside_images: Annotated[bool, typer.Option(
        "--allow-outside-images", help="Read case images outside the case file's folder "
        "(absolute paths, ../, symlinks) and send them to the judge.")] = False,
    out: Annotated[Path | None, typer.Option(help="Run directory (default results/"
                                             "evaluate-<judge>-<time>).")] = None,
    resume: Resume = None,
    concurrency: Concurrency = 16,
    max_attempts: MaxAttempts = 6,
    timeout: Timeout = 120.0,
    backoff_base: BackoffBase = 1.0,
    backoff_cap: BackoffCap = 30.0,
    rpm: Rpm = None,
    tpm: Tpm = None,
    no_cache: NoCache = False,
    cache_dir: CacheDir = None,
    cache_key_url: CacheKeyUrl = False,
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

    def benchmark():
        from visioneval.evaluators.evaluate import EvaluateOptions, build

        if cases is None:
            raise ValueError("give the cases file (or --resume RUN_DIR)")
        run = build(EvaluateOptions(
            cases=str(cases.resolve()), judge_samples=judge_samples,
            judge_temperature=judge_temperature,
            judge_max_tokens=judge_max_tokens, judge_text_only=judge_text_only,
            validator_timeout_s=validator_timeout, allow_scripts=allow_scripts,
            allow_outside_images=allow_outside_images))
        if run.needs_judge and (judge_backend is None or judge_model is None):
            raise ValueError(f"{cases} uses judges: give --judge-backend and --judge-model "
                             "(a vision-capable model)")
        return run

    def settings():
        from visioneval.evaluators.evaluate import EvaluateOptions

        return EvaluateOptions(cases=str(cases), judge_samples=judge_samples,
                               judge_temperature=judge_temperature,
                               judge_max_tokens=judge_max_tokens).judge_settings()

    run_command("evaluate", resume=resume, backend=judge_backend, model=judge_model,
                base_url=judge_base_url, api_key_env=judge_api_key_env, benchmark=benchmark,
                settings=settings, backend_required=False,
                engine=lambda: engine_options(concurrency, max_attempts, timeout, backoff_base,
                                              backoff_cap, no_cache, cache_dir, rpm, tpm,
                                              cache_key_url, price_in, price_out, max_cost),
                out=out, verbose=verbose, no_progress=no_progress, no_report=no_report,
                spread=lambda: distribution(shard, executor, shards, ray_address),
                dry_run=dry_run)


@app.command()
def validate(
    name: Annotated[str, typer.Argument(help="count, ocr, json or chart.")],
    payload: Annotated[str | None, typer.Argument(
        help='JSON {"output", "expected_output", "input", ...options}; default: stdin.')
                       ] = None,
) -> None:
    """Run a code validator: result JSON on stdout; exit 0 passed, 1 failed, 2 error."""
    import importlib

    from visioneval.evaluators.result import EvalResult
    from visioneval.validators import BUILTIN
    from visioneval.validators.protocol import main

    if name not in BUILTIN:
        result = EvalResult.error(f"unknown validator {name!r}; built-in: {', '.join(BUILTIN)}")
        typer.echo(result.model_dump_json())
        raise typer.Exit(2)
    module = importlib.import_module(f"visioneval.validators.{name}")
    raise typer.Exit(main(module.validate, [payload] if payload is not None else []))
