"""`visioneval salbench`, `illusionbench` and `demo`."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app
from visioneval.cli.options import (
    DATA,
    MODEL,
    ApiKeyEnv,
    BackendOpt,
    BackoffBase,
    BackoffCap,
    BaseUrl,
    CacheDir,
    Concurrency,
    MaxAttempts,
    NoCache,
    NoProgress,
    NoReport,
    Resume,
    Temperature,
    Timeout,
    Verbose,
    engine_options,
    run_command,
)


class PromptStyle(StrEnum):
    paper = "paper"
    lmms_eval = "lmms-eval"


class IllusionProtocol(StrEnum):
    original = "original"
    lmms_strict = "lmms-strict"
    lmms_recall = "lmms-recall"
    all = "all"


@app.command()
def salbench(
    backend: BackendOpt = None,
    model: Annotated[str | None, typer.Option(help="Model name as the server knows it "
                                              "(builtin: popout, random, majority).",
                                              rich_help_panel=MODEL)] = None,
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = None,
    temperature: Temperature = 0.0,
    max_tokens: Annotated[int, typer.Option(min=1, rich_help_panel=MODEL)] = 128,
    data_dir: Annotated[Path | None, typer.Option(help="Local copy of the dataset repository "
                                                  "(<dir>/<config>/*.parquet); default: "
                                                  "download salbench-vlm/salbench.",
                                                  rich_help_panel=DATA)] = None,
    splits: Annotated[str | None, typer.Option(help="synthetic (P3), natural (O3), or both.",
                                               rich_help_panel=DATA)] = None,
    tasks: Annotated[str | None, typer.Option(help="D, R, VR (Detection, Referring, Visual "
                                              "Referring).", rich_help_panel=DATA)] = None,
    configs: Annotated[str | None, typer.Option(help="HF configs by name, e.g. P3,O3_box "
                                                "(instead of --splits/--tasks).",
                                                rich_help_panel=DATA)] = None,
    num_samples: Annotated[int | None, typer.Option("--num-samples", "--samples", min=1,
                                                    help="First N rows of each config.",
                                                    rich_help_panel=DATA)] = None,
    shots: Annotated[int, typer.Option("--shots", "--num-shots",
                                       help="0, 3 or 5 in-context examples.",
                                       rich_help_panel=DATA)] = 0,
    prompt: Annotated[PromptStyle, typer.Option(help="paper: the dataset question verbatim; "
                                                "lmms-eval: plus its one-word suffix.",
                                                rich_help_panel=DATA)] = PromptStyle.paper,
    seed: Annotated[int, typer.Option(help="Seed for few-shot examples and random baseline.",
                                      rich_help_panel=DATA)] = 0,
    out: Annotated[Path | None, typer.Option(help="Run directory (default results/"
                                             "salbench-<model>-<time>).")] = None,
    resume: Resume = None,
    concurrency: Concurrency = 16,
    max_attempts: MaxAttempts = 6,
    timeout: Timeout = 120.0,
    backoff_base: BackoffBase = 1.0,
    backoff_cap: BackoffCap = 30.0,
    no_cache: NoCache = False,
    cache_dir: CacheDir = None,
    no_progress: NoProgress = False,
    no_report: NoReport = False,
    verbose: Verbose = False,
) -> None:
    """Evaluate a model on SalBench (arXiv 2507.04741) as the paper does."""

    def benchmark():
        from visioneval.benchmarks.salbench.benchmark import SalBenchOptions, build
        from visioneval.benchmarks.salbench.spec import select_configs
        from visioneval.commands.common import split_list

        if shots not in (0, 3, 5):
            raise ValueError("--shots must be 0, 3 or 5")
        chosen = select_configs(split_list(configs), split_list(splits), split_list(tasks))
        return build(SalBenchOptions(configs=[c.name for c in chosen], shots=shots,
                                     prompt=prompt.value, num_samples=num_samples, seed=seed,
                                     data_dir=str(data_dir.resolve()) if data_dir else None))

    if resume is None:
        backend, model = _seed_defaults(backend, model)
    run_command("salbench", resume=resume, backend=backend, model=model, base_url=base_url,
                api_key_env=api_key_env, benchmark=benchmark,
                settings=lambda: _settings(temperature, max_tokens),
                engine=lambda: engine_options(concurrency, max_attempts, timeout, backoff_base,
                                              backoff_cap, no_cache, cache_dir),
                out=out, verbose=verbose, no_progress=no_progress, no_report=no_report)


@app.command()
def illusionbench(
    backend: BackendOpt = None,
    model: Annotated[str | None, typer.Option(help="Model name as the server knows it "
                                              "(builtin: random).",
                                              rich_help_panel=MODEL)] = None,
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = None,
    temperature: Temperature = 0.0,
    max_tokens: Annotated[int, typer.Option(min=1, help="Enough for a one-word or 'Answer: X' "
                                            "reply (lmms-eval's max_new_tokens).",
                                            rich_help_panel=MODEL)] = 64,
    data_dir: Annotated[Path | None, typer.Option(help="Local copy of the dataset repository "
                                                  "(Illusion_<SUBSET>-*.parquet in any "
                                                  "subfolder); default: download "
                                                  "arshiahemmat/IllusionBench.",
                                                  rich_help_panel=DATA)] = None,
    subsets: Annotated[str | None, typer.Option(help="ICON, LOGO, IN (default: all three).",
                                                rich_help_panel=DATA)] = None,
    tasks: Annotated[str | None, typer.Option(help="shape, scene (default: both).",
                                              rich_help_panel=DATA)] = None,
    num_samples: Annotated[int | None, typer.Option("--num-samples", "--samples", min=1,
                                                    help="First N rows of each subset "
                                                    "(with --sample-seed: a stratified "
                                                    "random N).", rich_help_panel=DATA)] = None,
    sample_seed: Annotated[int | None, typer.Option(help="Draw --num-samples rows per subset "
                                                    "at random, stratified by shape class "
                                                    "and difficulty.",
                                                    rich_help_panel=DATA)] = None,
    protocol: Annotated[IllusionProtocol, typer.Option(
        help="original: the paper's prompts and bucket rule; lmms-strict: lmms-eval's "
             "'Answer:' prompts, exact match; lmms-recall: original prompts, substring "
             "recall; all: the three side by side (two requests per image and task).",
        rich_help_panel=DATA)] = IllusionProtocol.all,
    fix_quirks: Annotated[bool, typer.Option("--fix-quirks", help="Report the original rule "
                                             "with its spelling quirks corrected (both "
                                             "variants are always computed).",
                                             rich_help_panel=DATA)] = False,
    out: Annotated[Path | None, typer.Option(help="Run directory (default results/"
                                             "illusionbench-<model>-<time>).")] = None,
    resume: Resume = None,
    concurrency: Concurrency = 16,
    max_attempts: MaxAttempts = 6,
    timeout: Timeout = 120.0,
    backoff_base: BackoffBase = 1.0,
    backoff_cap: BackoffCap = 30.0,
    no_cache: NoCache = False,
    cache_dir: CacheDir = None,
    no_progress: NoProgress = False,
    no_report: NoReport = False,
    verbose: Verbose = False,
) -> None:
    """Evaluate a model on IllusionBench (arXiv 2411.06287) under the paper's and
    lmms-eval's scoring protocols, side by side."""

    def benchmark():
        from visioneval.benchmarks.illusionbench.benchmark import (
            IllusionBenchOptions,
            build,
            choose,
        )
        from visioneval.commands.common import split_list

        if sample_seed is not None and num_samples is None:
            raise ValueError("--sample-seed draws --num-samples rows per subset; give both")
        return build(IllusionBenchOptions(
            subsets=choose("subsets", split_list(subsets)),
            tasks=choose("tasks", split_list(tasks)), protocol=protocol.value,
            fix_quirks=fix_quirks, num_samples=num_samples, sample_seed=sample_seed,
            data_dir=str(data_dir.resolve()) if data_dir else None))

    if resume is None:
        backend, model = _seed_defaults(backend, model)
    run_command("illusionbench", resume=resume, backend=backend, model=model,
                base_url=base_url, api_key_env=api_key_env, benchmark=benchmark,
                settings=lambda: _settings(temperature, max_tokens),
                engine=lambda: engine_options(concurrency, max_attempts, timeout, backoff_base,
                                              backoff_cap, no_cache, cache_dir),
                out=out, verbose=verbose, no_progress=no_progress, no_report=no_report)


@app.command()
def demo(
    n: Annotated[int, typer.Option(min=1, help="Synthetic scenes per config.")] = 100,
    seed: Annotated[int, typer.Option(help="Seed of the synthetic scenes.")] = 0,
    out: Annotated[Path | None, typer.Option(help="Run directory.")] = None,
    no_progress: NoProgress = False,
    no_report: NoReport = False,
    verbose: Verbose = False,
) -> None:
    """Offline: synthesise a small SalBench P3 set and evaluate the popout baseline on it."""
    from visioneval.commands.common import consoles

    def benchmark():
        from visioneval.benchmarks.salbench.benchmark import SalBenchOptions, build
        from visioneval.commands.demo import demo_data
        from visioneval.engine.cache import default_cache_path

        data = demo_data(default_cache_path().parent, n, seed)
        consoles()[1].print(f"synthetic SalBench P3 set: {data}", highlight=False,
                            soft_wrap=True)
        return build(SalBenchOptions(configs=["P3", "P3_box", "P3_box_img"],
                                     data_dir=str(data)))

    try:
        run_command("salbench", resume=None, backend="builtin", model="popout", base_url=None,
                    api_key_env=None, benchmark=benchmark, settings=lambda: _settings(0, 128),
                    engine=lambda: engine_options(16, 6, 120.0, 1.0, 30.0, True, None),
                    out=out, verbose=verbose, no_progress=no_progress, no_report=no_report)
    finally:
        consoles()[0].print(
            "popout is a classical image-processing baseline (no neural network) that finds "
            "the odd object by colour, size and angle statistics. Evaluate a real model with "
            "`visioneval salbench --backend openai --model ...` (see `visioneval salbench "
            "--help`).", highlight=False, soft_wrap=True)


SEED_BACKEND, SEED_MODEL = "ollama", "llava:7b"


def _seed_defaults(backend: str | None, model: str | None) -> tuple[str | None, str | None]:
    """The SalBench plan's defaults (an Ollama server on localhost serving llava:7b) for a
    command that names no model, said in one line; any other backend needs --model."""
    if model is not None or backend not in (None, SEED_BACKEND):
        return backend, model
    from visioneval.commands.common import consoles

    consoles()[1].print(f"no --model given: using the default {SEED_BACKEND} {SEED_MODEL} "
                        "(at http://localhost:11434 unless --base-url says otherwise)",
                        highlight=False, soft_wrap=True)
    return SEED_BACKEND, SEED_MODEL


def _settings(temperature: float, max_tokens: int):
    from visioneval.records import GenerationSettings

    return GenerationSettings(temperature=temperature, max_tokens=max_tokens)
