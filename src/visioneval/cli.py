"""The `visioneval` command: options in, calls out. Heavy modules load inside each command so
`visioneval --help` stays fast."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode="rich",
                  help="Measure how well vision-language models see.")
data_app = typer.Typer(no_args_is_help=True, help="Make or inspect datasets.")
app.add_typer(data_app, name="data")


class BackendKind(StrEnum):
    openai = "openai"
    ollama = "ollama"
    anthropic = "anthropic"
    builtin = "builtin"


class PromptStyle(StrEnum):
    paper = "paper"
    lmms_eval = "lmms-eval"


class IllusionProtocol(StrEnum):
    original = "original"
    lmms_strict = "lmms-strict"
    lmms_recall = "lmms-recall"
    all = "all"


ENGINE = "Engine"
MODEL = "Model"
DATA = "Data"

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
NoCache = Annotated[bool, typer.Option("--no-cache", help="Send every request even if an "
                                       "identical one is cached.", rich_help_panel=ENGINE)]
CacheDir = Annotated[Path | None, typer.Option(help="Response cache folder (default "
                                               "~/.cache/visioneval).", rich_help_panel=ENGINE)]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Debug logs.")]
NoProgress = Annotated[bool, typer.Option("--no-progress", help="No progress bar.")]


def _engine_options(concurrency: int, max_attempts: int, timeout: float, backoff_base: float,
                    backoff_cap: float, no_cache: bool, cache_dir: Path | None):
    from visioneval.engine.cache import default_cache_path
    from visioneval.session import EngineOptions

    cache = None if no_cache else (
        cache_dir / "responses.sqlite3" if cache_dir else default_cache_path())
    return EngineOptions(concurrency=concurrency, max_attempts=max_attempts, timeout_s=timeout,
                         backoff_base_s=backoff_base, backoff_cap_s=backoff_cap,
                         cache_path=cache)


@app.command()
def salbench(
    backend: Annotated[BackendKind | None, typer.Option(help="Where the model runs.",
                                                        rich_help_panel=MODEL)] = None,
    model: Annotated[str | None, typer.Option(help="Model name as the server knows it "
                                              "(builtin: popout, random, majority).",
                                              rich_help_panel=MODEL)] = None,
    base_url: Annotated[str | None, typer.Option(help="Server URL (openai: https://api.openai"
                                                 ".com/v1; ollama: http://localhost:11434).",
                                                 rich_help_panel=MODEL)] = None,
    api_key_env: Annotated[str | None, typer.Option(help="Environment variable holding the "
                                                    "key (default OPENAI_API_KEY, "
                                                    "OPENROUTER_API_KEY for openrouter.ai, "
                                                    "ANTHROPIC_API_KEY).",
                                                    rich_help_panel=MODEL)] = None,
    temperature: Annotated[float, typer.Option(rich_help_panel=MODEL)] = 0.0,
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
    shots: Annotated[int, typer.Option(help="0, 3 or 5 in-context examples.",
                                       rich_help_panel=DATA)] = 0,
    prompt: Annotated[PromptStyle, typer.Option(help="paper: the dataset question verbatim; "
                                                "lmms-eval: plus its one-word suffix.",
                                                rich_help_panel=DATA)] = PromptStyle.paper,
    seed: Annotated[int, typer.Option(help="Seed for few-shot examples and random baseline.",
                                      rich_help_panel=DATA)] = 0,
    out: Annotated[Path | None, typer.Option(help="Run directory (default results/"
                                             "salbench-<model>-<time>).")] = None,
    resume: Annotated[Path | None, typer.Option(help="Continue the run in this directory "
                                                "with its recorded settings.")] = None,
    concurrency: Concurrency = 16,
    max_attempts: MaxAttempts = 6,
    timeout: Timeout = 120.0,
    backoff_base: BackoffBase = 1.0,
    backoff_cap: BackoffCap = 30.0,
    no_cache: NoCache = False,
    cache_dir: CacheDir = None,
    no_progress: NoProgress = False,
    verbose: Verbose = False,
) -> None:
    """Evaluate a model on SalBench (arXiv 2507.04741) as the paper does."""
    from visioneval.commands import run as command
    from visioneval.commands.common import consoles, guarded, setup_logging, split_list

    console, err = consoles()
    setup_logging(err, verbose)

    def action() -> int:
        engine = _engine_options(concurrency, max_attempts, timeout, backoff_base, backoff_cap,
                                 no_cache, cache_dir)
        if resume is not None:
            return command.resume(resume, "salbench", engine, console, err, not no_progress)
        if backend is None or model is None:
            raise ValueError("--backend and --model are required (or --resume RUN_DIR)")
        if shots not in (0, 3, 5):
            raise ValueError("--shots must be 0, 3 or 5")
        from visioneval.backends.registry import BackendSpec
        from visioneval.benchmarks.salbench.benchmark import SalBenchOptions, build
        from visioneval.benchmarks.salbench.spec import select_configs
        from visioneval.records import GenerationSettings

        chosen = select_configs(split_list(configs), split_list(splits), split_list(tasks))
        options = SalBenchOptions(configs=[c.name for c in chosen], shots=shots,
                                  prompt=prompt.value, num_samples=num_samples, seed=seed,
                                  data_dir=str(data_dir) if data_dir else None)
        spec = BackendSpec(kind=backend.value, model=model, base_url=base_url,
                           api_key_env=api_key_env)
        settings = GenerationSettings(temperature=temperature, max_tokens=max_tokens)
        return command.run(build(options), spec, settings, engine, out, console, err,
                           not no_progress)

    raise typer.Exit(guarded(err, action))


@app.command()
def illusionbench(
    backend: Annotated[BackendKind | None, typer.Option(help="Where the model runs.",
                                                        rich_help_panel=MODEL)] = None,
    model: Annotated[str | None, typer.Option(help="Model name as the server knows it "
                                              "(builtin: random).",
                                              rich_help_panel=MODEL)] = None,
    base_url: Annotated[str | None, typer.Option(help="Server URL (openai: https://api.openai"
                                                 ".com/v1; ollama: http://localhost:11434).",
                                                 rich_help_panel=MODEL)] = None,
    api_key_env: Annotated[str | None, typer.Option(help="Environment variable holding the "
                                                    "key (default OPENAI_API_KEY, "
                                                    "OPENROUTER_API_KEY for openrouter.ai, "
                                                    "ANTHROPIC_API_KEY).",
                                                    rich_help_panel=MODEL)] = None,
    temperature: Annotated[float, typer.Option(rich_help_panel=MODEL)] = 0.0,
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
    num_samples: Annotated[int | None, typer.Option(min=1, help="First N rows of each subset "
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
    resume: Annotated[Path | None, typer.Option(help="Continue the run in this directory "
                                                "with its recorded settings.")] = None,
    concurrency: Concurrency = 16,
    max_attempts: MaxAttempts = 6,
    timeout: Timeout = 120.0,
    backoff_base: BackoffBase = 1.0,
    backoff_cap: BackoffCap = 30.0,
    no_cache: NoCache = False,
    cache_dir: CacheDir = None,
    no_progress: NoProgress = False,
    verbose: Verbose = False,
) -> None:
    """Evaluate a model on IllusionBench (arXiv 2411.06287) under the paper's and
    lmms-eval's scoring protocols, side by side."""
    from visioneval.commands import run as command
    from visioneval.commands.common import consoles, guarded, setup_logging, split_list

    console, err = consoles()
    setup_logging(err, verbose)

    def action() -> int:
        engine = _engine_options(concurrency, max_attempts, timeout, backoff_base, backoff_cap,
                                 no_cache, cache_dir)
        if resume is not None:
            return command.resume(resume, "illusionbench", engine, console, err,
                                  not no_progress)
        if backend is None or model is None:
            raise ValueError("--backend and --model are required (or --resume RUN_DIR)")
        if sample_seed is not None and num_samples is None:
            raise ValueError("--sample-seed draws --num-samples rows per subset; give both")
        from visioneval.backends.registry import BackendSpec
        from visioneval.benchmarks.illusionbench.benchmark import (
            IllusionBenchOptions,
            build,
            choose,
        )
        from visioneval.records import GenerationSettings

        options = IllusionBenchOptions(
            subsets=choose("subsets", split_list(subsets)),
            tasks=choose("tasks", split_list(tasks)), protocol=protocol.value,
            fix_quirks=fix_quirks, num_samples=num_samples, sample_seed=sample_seed,
            data_dir=str(data_dir) if data_dir else None)
        spec = BackendSpec(kind=backend.value, model=model, base_url=base_url,
                           api_key_env=api_key_env)
        settings = GenerationSettings(temperature=temperature, max_tokens=max_tokens)
        return command.run(build(options), spec, settings, engine, out, console, err,
                           not no_progress)

    raise typer.Exit(guarded(err, action))


@app.command()
def demo(
    n: Annotated[int, typer.Option(min=1, help="Synthetic scenes per config.")] = 100,
    seed: Annotated[int, typer.Option(help="Seed of the synthetic scenes.")] = 0,
    out: Annotated[Path | None, typer.Option(help="Run directory.")] = None,
    no_progress: NoProgress = False,
    verbose: Verbose = False,
) -> None:
    """Offline: synthesise a small SalBench P3 set and evaluate the popout baseline on it."""
    from visioneval.backends.registry import BackendSpec
    from visioneval.benchmarks.salbench.benchmark import SalBenchOptions, build
    from visioneval.commands import run as command
    from visioneval.commands.common import consoles, guarded, setup_logging
    from visioneval.commands.demo import demo_data
    from visioneval.engine.cache import default_cache_path
    from visioneval.records import GenerationSettings

    console, err = consoles()
    setup_logging(err, verbose)

    def action() -> int:
        cache = default_cache_path()
        data = demo_data(cache.parent, n, seed)
        err.print(f"synthetic SalBench P3 set: {data}", highlight=False, soft_wrap=True)
        options = SalBenchOptions(configs=["P3", "P3_box", "P3_box_img"], data_dir=str(data))
        spec = BackendSpec(kind="builtin", model="popout")
        engine = _engine_options(16, 6, 120.0, 1.0, 30.0, True, None)
        code = command.run(build(options), spec, GenerationSettings(), engine, out, console,
                           err, not no_progress)
        console.print(
            "popout is a classical image-processing baseline (no neural network) that finds "
            "the odd object by colour, size and angle statistics. Evaluate a real model with "
            "`visioneval salbench --backend openai --model ...` (see `visioneval salbench "
            "--help`).", highlight=False, soft_wrap=True)
        return code

    raise typer.Exit(guarded(err, action))


@data_app.command("synth-salbench")
def synth_salbench(
    out: Annotated[Path, typer.Option(help="Folder to write P3, P3_box, P3_box_img into.")],
    n: Annotated[int, typer.Option(min=1, help="Rows per config.")] = 100,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
) -> None:
    """Write a P3-style synthetic SalBench set in the real schema and folder layout."""
    from visioneval.benchmarks.salbench.synth import write_synthetic

    counts = write_synthetic(out, n, seed)
    for config, rows in counts.items():
        typer.echo(f"{out / config}: {rows} rows")


@data_app.command("synth-illusionbench")
def synth_illusionbench(
    out: Annotated[Path, typer.Option(help="Folder to write data/Illusion_<SUBSET>-*.parquet "
                                      "into (use it as --data-dir).")],
    n: Annotated[int, typer.Option(min=1, help="Rows per subset (21 or more covers every "
                                   "class).")] = 24,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
) -> None:
    """Write a small IllusionBench-shaped set (ICON, LOGO, IN) in the real schema and names."""
    from visioneval.benchmarks.illusionbench.synth import write_synthetic

    for subset, path in write_synthetic(out, n, seed).items():
        typer.echo(f"{path}: {n} rows ({subset})")


@app.command()
def loopback(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: any free port).")] = 8765,
    model: Annotated[list[str] | None, typer.Option(help="Model name(s) to serve.")] = None,
    answer: Annotated[str, typer.Option(help="hash (a class picked from the prompt), popout "
                                        "(the baseline looks at the image) or fixed:TEXT.")
                      ] = "popout",
    latency: Annotated[float, typer.Option(help="Seconds before each answer.")] = 0.0,
    fail_rate: Annotated[float, typer.Option(min=0, max=1, help="Share of requests that fail.")
                         ] = 0.0,
    faults: Annotated[str, typer.Option(help="Faults to draw from: 429,500,drop,stall.")
                      ] = "429,500,drop",
    seed: Annotated[int, typer.Option(help="Seed of the fault draws.")] = 0,
) -> None:
    """Serve a scripted model over the OpenAI, Ollama and Anthropic protocols on 127.0.0.1."""
    from visioneval.commands.loopback import serve

    raise typer.Exit(serve(port, tuple(model or ["m"]), answer, latency, fail_rate,
                           faults, seed))


def main() -> None:
    app()
