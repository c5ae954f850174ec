"""visioneval from Python: run a registered benchmark or your own, get the run's numbers.

    import visioneval
    result = visioneval.run("salbench", model="gpt-4o", backend="openai",
                            options={"configs": ["P3"], "num_samples": 50})
    result.metrics["P3"]["strict"]["macro_f1"]

The same engine, run directory, cache, resume and report as the command line; nothing is
printed unless `progress` is asked for. `arun` is the coroutine for code that already runs
an event loop (a notebook)."""

from __future__ import annotations

import asyncio
import difflib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack

from pydantic import BaseModel

from visioneval import terminal
from visioneval.backends.registry import BackendSpec
from visioneval.core import registry
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.records import GenerationSettings
from visioneval.core.store import RunStore
from visioneval.engine.options import EngineOptions
from visioneval.report.page import try_write_report
from visioneval.runs.execute import run_to_end
from visioneval.runs.output import Output
from visioneval.runs.spec import RunSpec, Stopping


@dataclass(frozen=True)
class RunResult:
    directory: Path
    metrics: dict[str, Any]
    n_records: int
    n_errors: int
    status: str
    report: Path | None
    variants: dict[str, Any] | None = None  # variants.json, when the run sent variants
    epochs: dict[str, Any] | None = None  # epochs.json, when each sample was asked K times


BenchmarkLike = str | BenchmarkDefinition | type[BenchmarkDefinition] | Benchmark


def _resolve(benchmark: BenchmarkLike, options: dict[str, Any] | BaseModel | None
             ) -> tuple[Benchmark, str | None, BenchmarkDefinition | None]:
    """(the benchmark, the definition's module:attribute when it is not registered, the
    definition object the caller gave or named: None for a Benchmark object). A name or a
    definition takes `options` (its command's options, as a dict or the model); a Benchmark
    object is used as it is. The run's end-of-run report is drawn with that definition."""
    if isinstance(benchmark, str):
        ref = None if benchmark in registry.names() else registry.portable(benchmark)
        definition = registry.definition(benchmark)
    elif isinstance(benchmark, type) and issubclass(benchmark, BenchmarkDefinition):
        definition, ref = benchmark(), _ref_of(benchmark)
    elif isinstance(benchmark, BenchmarkDefinition):
        definition, ref = benchmark, _ref_of(type(benchmark))
    else:
        if options is not None:
            raise ValueError("options are for a benchmark given by name or definition; a "
                             "Benchmark object already has its options")
        return benchmark, None, None
    if isinstance(options, BaseModel):
        return definition.from_command(options), ref, definition
    if found := definition.unknown_option(options or {}):
        raise ValueError(f"options {found[0]}: {found[1]}")
    model = definition.command_options
    if model is None:
        return definition.build(options or {}), ref, definition
    return definition.from_command(model.model_validate(options or {})), ref, definition


def _ref_of(cls: type) -> str | None:
    """Where a user's definition can be loaded again (resume, report): a single file's path
    (a script or a module next to it), or package.module:Class for a module inside a package
    (its relative imports need the package). None for a registered definition."""
    if getattr(cls, "name", None) in registry.names():
        return None
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if "." in cls.__module__ or not path:
        return f"{cls.__module__}:{cls.__qualname__}"
    return f"{Path(path).resolve()}:{cls.__qualname__}"


class RunArguments(TypedDict, total=False):
    """The keyword arguments of `run` and `arun` after `model` (see `run`)."""

    backend: str  # "openai" unless given
    base_url: str | None
    api_key_env: str | None
    options: dict[str, Any] | BaseModel | None
    out: Path | None
    temperature: float  # 0 unless given
    max_tokens: int | None  # None: the benchmark's own
    engine: EngineOptions | None
    progress: bool  # False unless given
    report: bool  # True unless given
    variants: Sequence[str]
    epochs: int
    score: str
    batch: bool
    target_ci: float | None


async def arun(benchmark: BenchmarkLike, *, model: str,
               **given: Unpack[RunArguments]) -> RunResult:
    """Run `benchmark` on `model` and return its metrics (see `run`)."""
    if unknown := sorted(set(given) - set(RunArguments.__annotations__)):
        near = difflib.get_close_matches(unknown[0], RunArguments.__annotations__, n=1)
        raise TypeError(f"run() got an unexpected keyword argument {unknown[0]!r}"
                        + (f" (did you mean {near[0]!r}?)" if near else ""))
    bench, ref, definition = _resolve(benchmark, given.get("options"))
    target_ci, out, max_tokens = given.get("target_ci"), given.get("out"), \
        given.get("max_tokens")
    if max_tokens is None:  # the benchmark's own
        max_tokens = (definition or _registered_or_generic(bench.name)).max_tokens
    spec = RunSpec.of(
        bench, definition=ref,
        backend=BackendSpec(kind=given.get("backend", "openai"), model=model,
                            base_url=given.get("base_url"),
                            api_key_env=given.get("api_key_env")),
        generation=GenerationSettings(temperature=given.get("temperature", 0.0),
                                      max_tokens=max_tokens),
        out=Path(out) if out else None, engine=given.get("engine") or EngineOptions(),
        variants=tuple(given.get("variants", ())), epochs=given.get("epochs", 1),
        score=given.get("score", "sampled"),
        batch=given.get("batch", False),
        stopping=Stopping(target_ci=target_ci) if target_ci is not None else None)
    spec.build(definition)  # the variants, checked with the caller's own definition
    return await _arun(spec, given.get("progress", False), given.get("report", True),
                       definition)


def _registered_or_generic(name: str) -> BenchmarkDefinition:
    """A Benchmark object's defaults: the registered definition of its name, or the base's."""
    return registry.definition(name) if name in registry.names() else BenchmarkDefinition()


async def _arun(spec: RunSpec, progress: bool, report: bool,
                given: BenchmarkDefinition | None) -> RunResult:
    quiet = terminal.console(quiet=True)
    output = Output(quiet, terminal.console(stderr=True) if progress else quiet,
                    progress=progress,
                    report=report)
    result, page = await run_to_end(
        spec, output, (lambda directory: _report(directory, given)) if report else None)
    found = result.variants.model_dump(mode="json", exclude_none=True) \
        if result.variants is not None else None
    epochs = result.epochs.model_dump(mode="json", exclude_none=True) \
        if result.epochs is not None else None
    return RunResult(result.directory, result.metrics, result.n_records, result.n_errors,
                     result.status, page, found, epochs)


def _report(directory: Path, given: BenchmarkDefinition | None) -> Path | None:
    """The end-of-run report, drawn with the definition this call ran (None: a Benchmark
    object, shown by the registered definition of its name, or the generic one)."""
    return try_write_report(directory, given)


def run(benchmark: BenchmarkLike, *, model: str, **given: Unpack[RunArguments]) -> RunResult:
    """Run `benchmark` (a registered name, "module:attribute", a BenchmarkDefinition or a
    Benchmark object) on `model` behind `backend` ("openai", "openrouter", "ollama",
    "anthropic" or "builtin"). `options` are the benchmark's command options (the fields
    of its definition's `command_options`); `variants` as `--variant` names them
    ("blind", "jpeg:50", ...); `epochs` asks every sample that many times (`--epochs`,
    summarized in `epochs`) and `score="expected"` adds each answer's expected outcome from
    its log-probabilities (`--score expected`); `batch` sends the run through the
    provider's batch API (`--batch`); `target_ci` stops once the headline's 95% interval is
    at most that many points wide (`--target-ci`). Returns the run's directory and metrics (and
    variants.json's summary as `variants`); errors are counted in `n_errors`, never
    scored."""
    return asyncio.run(arun(benchmark, model=model, **given))


def run_request(spec: RunSpec, *, progress: bool = False, report: bool = True) -> RunResult:
    """Run a `RunSpec`, the value every command builds from its flags, a suite from its rows
    and `run` from its arguments (or read back from a run's run.json,
    `RunSpec.from_run`). Runs in this process (`executor="ray"` is for the command line)."""
    return asyncio.run(arun_request(spec, progress=progress, report=report))


async def arun_request(spec: RunSpec, *, progress: bool = False,
                       report: bool = True) -> RunResult:
    """`run_request` as a coroutine."""
    if spec.on_ray:
        raise ValueError("a spec with executor ray runs its shards on Ray from the command "
                         "line (--executor ray); run_request runs in this process")
    return await _arun(spec, progress, report, None)


def load(directory: Path) -> RunResult:
    """A finished run's numbers, read back from its directory."""
    store = RunStore.open(Path(directory))
    metrics = store.read_metrics()
    counts = store.info.counts
    page = Path(directory) / "report.html"
    return RunResult(Path(directory), metrics, counts.records if counts else 0,
                     counts.errors if counts else 0, store.info.status or "?",
                     page if page.exists() else None)
