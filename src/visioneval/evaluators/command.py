"""`visioneval evaluate`: eval cases graded by rubric judges and code validators; the
definition registers it (`HasCommand`), with its own --judge-* flag spellings."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.options import (
    BackendKind,
    BackoffBase,
    BackoffCap,
    Batch,
    CacheDir,
    CacheKeyUrl,
    Concurrency,
    DryRun,
    ExecutorOpt,
    JudgePriceIn,
    JudgePriceOut,
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
    run_command,
)
from visioneval.cli.panels import JUDGE, OUTPUT
from visioneval.evaluators.options import CONTROLS, Control, PanelJudge
from visioneval.evaluators.panel import resumed_judges, split_judges

_OWN = "evaluate options"


class PanelScoreChoice(StrEnum):
    mean = "mean"
    median = "median"


def parse_controls(given: list[str]) -> tuple[Control, ...]:
    """`--judge-controls blind,order` (repeatable; `all` for every one), in a fixed order."""
    named = {w.strip() for item in given for w in item.split(",") if w.strip()}
    if "all" in named:
        named = set(CONTROLS) | (named - {"all"})
    unknown = sorted(named - set(CONTROLS))
    if unknown:
        raise ValueError(f"--judge-controls: no control {', '.join(unknown)}; the controls "
                         f"are {', '.join(CONTROLS)} (or all)")
    return tuple(c for c in CONTROLS if c in named)


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
    judge_backend: Annotated[list[BackendKind] | None, typer.Option(
        metavar="KIND", help="openai, openrouter, ollama, anthropic or builtin; per judge.",
        rich_help_panel=JUDGE)] = None,
    judge_model: Annotated[list[str] | None, typer.Option(
        metavar="NAME", help="A vision-capable model; repeat it for several judges.",
        rich_help_panel=JUDGE)] = None,
    judge_base_url: Annotated[list[str] | None, typer.Option(
        metavar="URL", help="One per judge, or replicas of one judge.",
        show_default="the backend's", rich_help_panel=JUDGE)] = None,
    judge_api_key_env: Annotated[list[str] | None, typer.Option(
        metavar="NAME", help="Key variable, per judge.",
        show_default="a hosted API's own, else none", rich_help_panel=JUDGE)] = None,
    judge_controls: Annotated[list[str] | None, typer.Option(
        metavar="LIST", help="Check the judges: blind, order, probes (comma list) or all.",
        rich_help_panel=JUDGE)] = None,
    panel_score: Annotated[PanelScoreChoice | None, typer.Option(
        help="A case's score from several judges.",
        show_default="mean", rich_help_panel=JUDGE)] = None,
    human_labels: Annotated[Path | None, typer.Option(
        metavar="FILE", help="People's scores (CSV or JSONL): each judge's agreement.",
        rich_help_panel=JUDGE)] = None,
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
    judge_price_in: JudgePriceIn = None,
    judge_price_out: JudgePriceOut = None,
    max_cost: MaxCost = None,
    dry_run: DryRun = False,
    no_progress: NoProgress = False,
    no_report: NoReport = False,
    verbose: Verbose = False,
    shard: ShardOpt = None,
    executor: ExecutorOpt = "local",
    shards: ShardsOpt = None,
    ray_address: RayAddressOpt = None,
    batch: Batch = False,
) -> None:
    """Grade free-form answers about images with rubric judges and code validators."""

    samples = 1 if judge_samples is None else judge_samples
    max_tokens = 1024 if judge_max_tokens is None else judge_max_tokens
    if resume is not None:  # the judges are the run's: their servers are named again
        first, trust_panel = resumed_judges(resume, judge_base_url or [],
                                            judge_api_key_env or [])
        panel: tuple[PanelJudge, ...] = ()
    else:
        first, panel = split_judges(judge_model or [], [str(k) for k in judge_backend or []],
                                    judge_base_url or [], judge_api_key_env or [])
        trust_panel = {}
    controls = parse_controls(judge_controls or [])

    def benchmark():
        from visioneval.evaluators.evaluate import EvaluateOptions, build

        if cases is None:
            raise ValueError("give the cases file (or --resume RUN_DIR)")
        run = build(EvaluateOptions(
            cases=str(cases.resolve()), judge_samples=samples,
            judge_temperature=judge_temperature, judge_max_tokens=max_tokens,
            judge_text_only=judge_text_only,
            validator_timeout_s=30.0 if validator_timeout is None else validator_timeout,
            allow_scripts=allow_scripts, allow_outside_images=allow_outside_images,
            judge_controls=controls, panel=panel,
            panel_score=(panel_score or PanelScoreChoice.mean).value,
            human_labels=str(human_labels.resolve()) if human_labels else None))
        if (controls or panel or human_labels) and not run.needs_judge:
            raise ValueError(f"{cases} has no judge evaluator: --judge-controls, several "
                             "--judge-model and --human-labels check judges")
        if run.needs_judge and (first.kind is None or first.model is None):
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
             "--judge-text-only": judge_text_only or None, "--out": out,
             "--judge-controls": judge_controls or None, "--panel-score": panel_score,
             "--human-labels": human_labels}
    fixed = [name for name, value in given.items() if value is not None]
    trust: dict[str, object] = {k: True for k, v in (
        ("allow_scripts", allow_scripts), ("allow_outside_images", allow_outside_images)) if v}
    trust |= trust_panel
    from visioneval.commands.flags import RunFlags, RunTarget

    flags = RunFlags(
        backend=first.kind, model=first.model, base_url=first.base_urls,
        api_key_env=first.api_key_env, out=out, resume=resume, concurrency=concurrency,
        max_attempts=max_attempts, timeout=timeout, backoff_base=backoff_base,
        backoff_cap=backoff_cap, rpm=rpm, tpm=tpm, no_cache=no_cache, cache_dir=cache_dir,
        refresh_cache=refresh_cache, cache_key_url=cache_key_url, max_reply_mb=max_reply_mb,
        # The run's model is judge 1: the judges' price is its price unless --price-in says.
        price_in=judge_price_in if price_in is None else price_in,
        price_out=judge_price_out if price_out is None else price_out,
        judge_price_in=judge_price_in, judge_price_out=judge_price_out, max_cost=max_cost,
        dry_run=dry_run,
        no_progress=no_progress, no_report=no_report, verbose=verbose, shard=shard,
        executor=executor, shards=shards, ray_address=ray_address, batch=batch)
    run_command(flags, RunTarget("evaluate", benchmark, settings, backend_required=False,
                                 fixed=fixed, resume_options=trust))

