"""A suite's runs, planned before anything is sent: every benchmark (each combination of its
`vary` values) on every model, each an ordinary run directory under the suite's folder.

Runs that share a server are in one lane and go one after another, so each server gets one
concurrency budget (its model's `concurrency` per URL) however many runs it serves; lanes
run side by side."""

from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from visioneval.backends.batch.clients import refusal
from visioneval.backends.registry import BackendSpec, resolved_base_urls
from visioneval.core import registry
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.records import GenerationSettings
from visioneval.engine.options import EngineFlags, EngineOptions
from visioneval.engine.stopping import DEFAULT_MIN_SAMPLES
from visioneval.runs.spec import RunSpec, SpecError, Stopping
from visioneval.suite.spec import BenchmarkEntry, ModelEntry, SuiteFile


@dataclass(frozen=True, eq=False)
class PlannedRun:
    """One benchmark setting on one model: its `RunSpec` (its run directory is that
    RunSpec's `out`), and what the suite says of it (its `vary` values, its model's entry,
    its lane)."""

    setting: tuple[tuple[str, Any], ...]  # the `vary` values of this run, in file order
    model: ModelEntry
    spec: RunSpec
    lane: int = 0

    @property
    def benchmark(self) -> str:
        """As the suite file names it: a registered name, or your definition as
        module:attribute."""
        return self.spec.benchmark

    @property
    def directory(self) -> Path:
        assert self.spec.out is not None  # a suite names every run's directory
        return self.spec.out

    @property
    def settings(self) -> GenerationSettings:
        return self.spec.settings()

    @property
    def target_ci(self) -> float | None:
        return self.spec.stopping.target_ci if self.spec.stopping else None

    @property
    def label(self) -> str:
        """benchmark [k=v ...] · model: the run's name in the progress and the tables."""
        varied = " ".join(f"{k}={_text(v)}" for k, v in self.setting)
        return f"{self.benchmark_label}{' ' + varied if varied else ''} · {self.model.label}"

    @property
    def benchmark_label(self) -> str:
        return self.benchmark.rpartition(":")[2] if ":" in self.benchmark else self.benchmark

    def definition(self) -> BenchmarkDefinition:
        return self.spec.definition_object()

    def build(self) -> Benchmark:
        """The benchmark with this run's options (ValueError naming the run and the option
        when one is not valid)."""
        try:
            return self.spec.build()
        except SpecError as exc:
            raise ValueError(f"{self.label}: {exc}") from None


@dataclass(frozen=True)
class SuitePlan:
    name: str
    out: Path
    runs: tuple[PlannedRun, ...]
    lanes: dict[int, tuple[PlannedRun, ...]] = field(default_factory=dict)

    def by_benchmark(self) -> dict[str, list[PlannedRun]]:
        grouped: dict[str, list[PlannedRun]] = {}
        for run in self.runs:
            grouped.setdefault(run.benchmark, []).append(run)
        return grouped


def plan(suite: SuiteFile, out: Path | None, default_name: str, source: str) -> SuitePlan:
    """Every run of the suite, in file order (benchmarks, their settings, then models).
    `source` names the file in the line that refuses an option the benchmark does not
    have."""
    name = suite.name or default_name
    root = out or (Path(suite.out) if suite.out else Path("results") / "suites" / _safe(name))
    runs: list[PlannedRun] = []
    for number, entry in enumerate(suite.benchmarks, 1):
        definition = _definition(entry)
        _check_option_names(definition, entry, f"{source}: benchmarks[{number}]")
        for setting in _settings(entry):
            options = entry.options | dict(setting)
            generation = GenerationSettings(
                temperature=0.0 if entry.temperature is None else entry.temperature,
                max_tokens=entry.max_tokens or definition.max_tokens)
            folder = "-".join([_safe(entry.name.rpartition(":")[2]),
                               *(f"{_safe(k)}{_safe(_text(v))}" for k, v in setting)])
            for model in suite.models:
                runs.append(PlannedRun(setting, model, _spec(
                    entry, options, model, generation, _engine(suite, model),
                    root / folder / _safe(model.label))))
    _check_unique(runs)
    _check_batches(suite)
    lanes = _lanes(runs)
    placed = tuple(_with_lane(run, lanes) for run in runs)
    grouped: dict[int, tuple[PlannedRun, ...]] = {}
    for run in placed:
        grouped[run.lane] = (*grouped.get(run.lane, ()), run)
    return SuitePlan(name, root, placed, grouped)


def _definition(entry: BenchmarkEntry) -> BenchmarkDefinition:
    """The benchmark's definition: a registered name, or the user's own module:attribute,
    which the suite file names as a command line would (it is imported)."""
    return registry.definition(entry.name)


def _check_option_names(definition: BenchmarkDefinition, entry: BenchmarkEntry,
                        where: str) -> None:
    """An option (or a `vary` key) the benchmark does not have is refused in one line with
    the nearest name: its options model would drop it without a word."""
    for part, names in (("options", entry.options), ("vary", entry.vary)):
        if found := definition.unknown_option(names):
            key, why = found
            raise ValueError(f"{where}.{part}.{key}: {why}")


def _settings(entry: BenchmarkEntry) -> list[tuple[tuple[str, Any], ...]]:
    """Each combination of the `vary` values (one empty setting without `vary`)."""
    keys = list(entry.vary)
    return [tuple(zip(keys, values, strict=True))
            for values in itertools.product(*(entry.vary[k] for k in keys))]


def _spec(entry: BenchmarkEntry, options: dict[str, Any], model: ModelEntry,
          generation: GenerationSettings, engine: EngineOptions, out: Path) -> RunSpec:
    """A suite row as the run it is."""
    named = None if entry.name in registry.names() else registry.portable(entry.name)
    backend = BackendSpec(kind=model.backend, model=model.model,
                          base_url=list(model.urls()) or None, api_key_env=model.api_key_env)
    stopping = Stopping(target_ci=entry.target_ci, min_samples=entry.min_samples or
                        DEFAULT_MIN_SAMPLES) if entry.target_ci is not None else None
    return RunSpec.make(benchmark=entry.name, definition=named, options=options,
                        variants=tuple(entry.variants), epochs=entry.epochs, score=entry.score,
                        backend=backend,
                        generation=generation, engine=engine, stopping=stopping,
                        batch=model.batch, out=out)


def _engine(suite: SuiteFile, model: ModelEntry) -> EngineOptions:
    e = suite.engine
    flags = EngineFlags(concurrency=model.concurrency or e.concurrency,
                        max_attempts=e.max_attempts, timeout_s=e.timeout,
                        backoff_base_s=e.backoff_base, backoff_cap_s=e.backoff_cap,
                        rpm=model.rpm, tpm=model.tpm, no_cache=e.no_cache,
                        cache_dir=Path(e.cache_dir) if e.cache_dir else None,
                        price_in=model.price_in, price_out=model.price_out,
                        max_reply_mb=e.max_reply_mb)
    return flags.new_run()


def _check_batches(suite: SuiteFile) -> None:
    """A model with `batch = true` on a backend without a batch API is one line."""
    for model in suite.models:
        if model.batch:
            spec = BackendSpec(kind=model.backend, model=model.model,
                               base_url=list(model.urls()) or None)
            if why := refusal(spec):
                raise ValueError(f"model {model.label}: batch = true: "
                                 f"{why.removeprefix('--batch: ')}")


def _lanes(runs: list[PlannedRun]) -> dict[Path, int]:
    """Each run's lane: one per group of models that share a server (a URL), found by
    joining models with a URL in common; a builtin model is a lane of its own. A run in
    batches (its model's `batch = true`) is a lane of its own: it sends a few calls and
    then waits for the provider, so every batch of the suite is submitted at once and
    waited for together, not one after another."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    def node(run: PlannedRun) -> str:
        return f"batch:{run.directory}" if run.model.batch else run.model.label

    for run in runs:
        find(node(run))
        if run.model.batch:
            continue
        for url in resolved_base_urls(run.spec.backend):
            parent[find(node(run))] = find("url:" + url.rstrip("/"))
    roots: dict[str, int] = {}
    return {run.directory: roots.setdefault(find(node(run)), len(roots)) for run in runs}


def _with_lane(run: PlannedRun, lanes: dict[Path, int]) -> PlannedRun:
    return dataclasses.replace(run, lane=lanes[run.directory])


def _check_unique(runs: list[PlannedRun]) -> None:
    seen: dict[Path, PlannedRun] = {}
    for run in runs:
        if run.directory in seen:
            raise ValueError(f"{seen[run.directory].label} and {run.label} would share "
                             f"{run.directory}: give the models or benchmarks distinct names")
        seen[run.directory] = run


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"


def _text(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)
