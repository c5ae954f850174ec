"""Parameter recovery of `visioneval psychophysics` through the whole path: the default
`visioneval data synth-psychophysics` stimuli (8 fixed levels per feature, 20 trials each),
sent over HTTP to the loopback server's simulated observer (`visioneval loopback --answer
observer`) with known α, β, λ per feature (Wichmann & Hill 2001) and a known d′ and c for
the yes/no presence arrays, one run per observer seed through `visioneval.run_request`,
each run's metrics.json read back and compared with the observer's true values.

Per feature: thresholds reached, coverage of the true threshold (the level where ψ equals
the criterion, through γ = 1/3 and λ) by the 95% interval (an open upper end counts as
+inf; a run not reached covers nothing), median error (estimate/true − 1), median absolute
error, median interval width over the true threshold and wall time per run. Presence: the
observer's d′ and c against the fitted ones (the observer's d′ does not depend on the level,
so per run all presence levels are pooled, and each level's own 10 + 10 trials are shown
too), and an always-"yes" observer (criterion −inf) whose d′ must be near 0.

    uv run python measure/psychophysics_loopback_recovery.py --runs 100

`--flags "..."` passes `visioneval psychophysics` flags through (for instance a
placement method or `--bootstrap`), parsed by the command's own parser; the response cache
is always off, since every run sends the same stimuli to a differently seeded observer.
`--in-process N` fits counts drawn from the observer's ψ without the server instead: at the
default levels, at the same levels with 320 trials each, and at 8 levels from α/4 to 3α
with the default 20 trials, to tell the design, the fit and the path apart.

    uv run python measure/psychophysics_loopback_recovery.py \
        --in-process 300
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

import visioneval
from visioneval.backends.registry import BackendSpec
from visioneval.benchmarks.psychophysics.options import PsychophysicsOptions
from visioneval.commands.flags import RunFlags
from visioneval.commands.loopback import ObserverFlags, build_script
from visioneval.core import registry
from visioneval.core.records import GenerationSettings
from visioneval.engine.options import EngineOptions
from visioneval.loopback.observer import DEFAULT_CURVES, FEATURES, parse_curves
from visioneval.loopback.server import ThreadedServer
from visioneval.runs.spec import RunSpec
from visioneval.stats.detection import dprime
from visioneval.stats.psychometric import Sigmoid, criterion_level

BENCHMARK = "psychophysics"
GUESS = 1 / 3  # detection: one of orientation, colour, size
MODEL = "m"
EXPERIMENTS = "detection,presence"  # what is recovered; --flags may name others
ENGINE_FLAGS = frozenset({"concurrency", "max_attempts", "timeout", "backoff_base",
                          "backoff_cap", "rpm", "tpm", "max_reply_mb", "temperature",
                          "max_tokens"})
"""The shared run flags --flags may set; the rest (model, server, output, cache, shards)
belong to this script."""
HARMLESS = frozenset({"no_cache", "no_progress", "no_report", "verbose"})


@dataclass(frozen=True)
class ObserverSpec:
    """The simulated observer, as `visioneval loopback --observer ...` takes it."""

    curves: str = DEFAULT_CURVES
    form: str = "weibull"
    dprime: float = 1.5
    criterion: float = 0.0

    def flags(self, seed: int) -> ObserverFlags:
        return ObserverFlags(self.curves, self.form, self.dprime, self.criterion, seed)


@dataclass(frozen=True)
class RunSettings:
    """What every run is given: the benchmark's options, the engine's (no cache) and the
    generation settings, from --flags."""

    options: PsychophysicsOptions
    engine: EngineOptions
    generation: GenerationSettings


@dataclass(frozen=True)
class RunPlan:
    """One run: the observer and its seed, the run's settings, where to write."""

    out: Path
    seed: int
    observer: ObserverSpec
    settings: RunSettings


@dataclass(frozen=True)
class ThresholdFound:
    """One feature's fit in one run, beside the observer's true threshold."""

    feature: str
    true: float
    status: str
    threshold: float | None
    low: float | None
    high: float | None  # math.inf: the interval's upper end is open
    beta: float | None = None  # the fitted slope of F (the observer's: its curve's β)
    lapse: float | None = None

    @property
    def covers(self) -> bool:
        return self.low is not None and self.high is not None \
            and self.low <= self.true <= self.high


@dataclass(frozen=True)
class YesNo:
    """One presence level's hits and false alarms, and the fitted d′ and c."""

    feature: str
    level: float
    hits: int
    n_signal: int
    false_alarms: int
    n_noise: int
    dprime: float
    dprime_ci: tuple[float, float]
    c: float
    c_ci: tuple[float, float]


@dataclass(frozen=True)
class RunFigures:
    seed: int
    seconds: float
    n_errors: int
    n_unparsed: int
    thresholds: tuple[ThresholdFound, ...]
    presence: tuple[YesNo, ...]


@dataclass(frozen=True)
class FeatureSummary:
    feature: str
    unit: str
    true: float
    runs: int
    reached: int
    coverage: float  # share of all runs whose interval covers the true threshold
    median_error: float | None  # over reached runs
    median_abs_error: float | None
    median_width: float | None  # (high − low)/true; inf when most intervals are open
    open_intervals: int  # reached runs whose upper end is open
    below: int  # runs whose whole interval lies below the true threshold
    above: int
    median_seconds: float


@dataclass(frozen=True)
class DetectionSummary:
    label: str
    true_dprime: float
    true_c: float
    estimates: int
    median_dprime: float
    median_c: float
    coverage_dprime: float
    coverage_c: float | None  # None: the observer's c is infinite (always "yes")
    largest_abs_dprime: float


@dataclass(frozen=True)
class Summary:
    runs: int
    criterion: float
    seconds_per_run: float
    n_errors: int
    n_unparsed: int
    features: tuple[FeatureSummary, ...]
    detection: tuple[DetectionSummary, ...] = field(default_factory=tuple)
    figures: tuple[RunFigures, ...] = field(default_factory=tuple)  # every run, in order


def write_default_data(out: Path) -> Path:
    """The default dataset, as `visioneval data synth-psychophysics --out DIR` writes it."""
    definition = registry.definition(BENCHMARK)
    definition.synth(out, definition.synth_rows, 0)  # type: ignore[attr-defined]
    return out


def parse_flags(flags: Sequence[str], data: Path, bootstrap: int) -> RunSettings:
    """`flags` read by the `visioneval psychophysics` command's own parser, on top of this
    script's data, experiments (detection, presence) and bootstrap; ValueError (one line)
    for a flag this script sets itself or a bad value."""
    import typer

    from visioneval.cli import app

    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    command = group.get_command(group.make_context("visioneval", [BENCHMARK],
                                                   resilient_parsing=True), BENCHMARK)
    assert command is not None
    argv = ["--data", str(data), "--experiments", EXPERIMENTS, "--bootstrap", str(bootstrap),
            *flags]
    try:
        params = command.make_context(BENCHMARK, argv).params
    except typer.Exit:
        raise ValueError("--flags: --help is not a run") from None
    except Exception as exc:  # click's usage errors, from typer's own copy of click
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        raise ValueError(f"--flags: {message}") from None
    shared = {f.name: f.default for f in dataclasses.fields(RunFlags)}
    taken = [name for name, default in shared.items()
             if name not in ENGINE_FLAGS | HARMLESS and params.get(name) not in (default, ())]
    if taken:
        raise ValueError(f"--flags: {', '.join('--' + n.replace('_', '-') for n in taken)}: "
                         "this script sets the model, the server, the cache (off) and the "
                         "run folders itself")
    given = {name: params[name] for name in PsychophysicsOptions.model_fields
             if params.get(name) is not None}
    if isinstance(given.get("experiments"), str):
        given["experiments"] = [e.strip() for e in given["experiments"].split(",")
                                if e.strip()]
    try:
        options = PsychophysicsOptions.model_validate(given)
        engine = RunFlags(no_cache=True, **{n: params[n] for n in ENGINE_FLAGS
                                            if n in shared and params.get(n) is not None})
        generation = GenerationSettings(
            temperature=params.get("temperature") or 0.0,
            max_tokens=params.get("max_tokens") or registry.definition(BENCHMARK).max_tokens)
        return RunSettings(options, engine.engine().new_run(), generation)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = "--" + str(error["loc"][0]).replace("_", "-") if error["loc"] else "--flags"
        raise ValueError(f"--flags: {where}: {error['msg']}") from None


def run_one(plan: RunPlan) -> RunFigures:
    """One run against a freshly started observer with `plan.seed`; its metrics.json read."""
    script = build_script((MODEL,), "observer", 0.0, 0.0, "", 0,
                          observer=plan.observer.flags(plan.seed))
    benchmark = registry.definition(BENCHMARK).from_command(plan.settings.options)
    started = time.perf_counter()
    with ThreadedServer(script) as server:
        spec = BackendSpec(kind="openai", model=MODEL, base_url=server.base_url + "/v1")
        request = RunSpec.of(benchmark, backend=spec, generation=plan.settings.generation,
                             engine=plan.settings.engine, out=plan.out)
        result = visioneval.run_request(request, report=False)
    seconds = time.perf_counter() - started
    metrics = json.loads((result.directory / "metrics.json").read_text())
    return figures(metrics, plan, seconds)


def true_thresholds(observer: ObserverSpec, criterion: float) -> dict[str, float]:
    """The level where the observer's ψ equals `criterion`, per feature with a curve."""
    form: Sigmoid = "logistic" if observer.form == "logistic" else "weibull"
    out = {}
    for feature, curve in parse_curves(observer.curves).items():
        level = criterion_level(criterion, curve.alpha, curve.beta, GUESS, curve.lapse, form)
        if level is not None:
            out[feature] = level
    return out


def figures(metrics: dict[str, Any], plan: RunPlan, seconds: float) -> RunFigures:
    truth = true_thresholds(plan.observer, plan.settings.options.criterion)
    found = []
    for block in metrics.get("thresholds", []):
        if block["feature"] not in truth:
            continue
        low = high = None
        if block.get("threshold_ci95") is not None:
            low, top = block["threshold_ci95"]
            high = math.inf if top is None else top
        found.append(ThresholdFound(block["feature"], truth[block["feature"]],
                                    block["status"], block.get("threshold"), low, high,
                                    block.get("beta"), block.get("lapse")))
    presence = tuple(
        YesNo(row["feature"], row["level"], row["hits"], row["n_signal"],
              row["false_alarms"], row["n_noise"], row["dprime"], tuple(row["dprime_ci95"]),
              row["c"], tuple(row["c_ci95"]))
        for row in metrics.get("detection_theory", [])
        if row["experiment"] == "presence" and row.get("dprime") is not None)
    return RunFigures(plan.seed, seconds, metrics["n_errors"], metrics["n_unparsed"],
                      tuple(found), presence)


def summarize_features(runs: Sequence[RunFigures]) -> list[FeatureSummary]:
    units = {"orientation": "deg", "color": "ΔE00", "size": "log area ratio"}
    by_feature: dict[str, list[ThresholdFound]] = {f: [] for f in FEATURES}
    for run in runs:
        for found in run.thresholds:
            by_feature.setdefault(found.feature, []).append(found)
    seconds = statistics.median(r.seconds for r in runs)
    out = []
    for feature, rows in by_feature.items():
        if not rows:
            continue
        reached = [r for r in rows if r.threshold is not None]
        errors = [r.threshold / r.true - 1 for r in reached if r.threshold is not None]
        widths = [(r.high - r.low) / r.true for r in reached
                  if r.low is not None and r.high is not None]
        out.append(FeatureSummary(
            feature, units.get(feature, ""), rows[0].true, len(runs), len(reached),
            sum(r.covers for r in rows) / len(runs),
            statistics.median(errors) if errors else None,
            statistics.median(abs(e) for e in errors) if errors else None,
            statistics.median(widths) if widths else None,
            sum(r.high == math.inf for r in reached),
            sum(r.high is not None and r.high < r.true for r in rows),
            sum(r.low is not None and r.low > r.true for r in rows), seconds))
    return out


def _detection(label: str, estimates: Sequence[tuple[float, tuple[float, float], float,
                                                     tuple[float, float]]],
               true_d: float, true_c: float) -> DetectionSummary:
    return DetectionSummary(
        label, true_d, true_c, len(estimates),
        statistics.median(e[0] for e in estimates), statistics.median(e[2] for e in estimates),
        sum(e[1][0] <= true_d <= e[1][1] for e in estimates) / len(estimates),
        None if math.isinf(true_c) else
        sum(e[3][0] <= true_c <= e[3][1] for e in estimates) / len(estimates),
        max(abs(e[0]) for e in estimates))


def summarize_presence(runs: Sequence[RunFigures], observer: ObserverSpec
                       ) -> list[DetectionSummary]:
    """The observer's d′ is the same at every level: per run, every presence level pooled;
    and each level's own estimate."""
    pooled, cells = [], []
    for run in runs:
        if not run.presence:
            continue
        d = dprime(sum(r.hits for r in run.presence), sum(r.n_signal for r in run.presence),
                   sum(r.false_alarms for r in run.presence),
                   sum(r.n_noise for r in run.presence))
        pooled.append((d.dprime, d.dprime_ci, d.criterion, d.criterion_ci))
        cells += [(r.dprime, r.dprime_ci, r.c, r.c_ci) for r in run.presence]
    if not pooled:
        return []
    run = next(r for r in runs if r.presence)
    per_run = sum(r.n_signal for r in run.presence), sum(r.n_noise for r in run.presence)
    level = run.presence[0]
    return [_detection(f"presence, all levels pooled ({per_run[0]} + {per_run[1]} trials "
                       "per run)", pooled, observer.dprime, observer.criterion),
            _detection(f"presence, each level ({level.n_signal} + {level.n_noise} trials)",
                       cells, observer.dprime, observer.criterion)]


def recover(data: Path, work: Path, seeds: Sequence[int], observer: ObserverSpec,
            flags: Sequence[str] = (), bootstrap: int = 1000, workers: int = 2,
            always_yes: bool = True) -> Summary:
    """`len(seeds)` runs of the default stimuli against the observer, one per seed (and one
    against an always-"yes" observer), summarised against the observer's true values."""
    settings = parse_flags(flags, data, bootstrap)  # a bad flag: before any run
    plans = [RunPlan(work / f"seed-{seed}", seed, observer, settings) for seed in seeds]
    if always_yes:
        presence = replace(settings, options=settings.options.model_copy(
            update={"experiments": ["presence"], "method": "constant"}))
        plans.append(RunPlan(work / "always-yes", 0, replace(observer, criterion=-math.inf),
                             presence))
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            done = list(pool.map(run_one, plans))
    else:
        done = [run_one(plan) for plan in plans]
    runs = done[:len(seeds)]
    detection = summarize_presence(runs, observer)
    if always_yes:
        yes = done[-1]
        detection += [replace(d, label=f"always 'yes' (criterion -inf), "
                              f"{d.label.removeprefix('presence, ')}")
                      for d in summarize_presence([yes], replace(observer, dprime=0.0,
                                                                 criterion=-math.inf))]
    return Summary(len(runs), settings.options.criterion,
                   statistics.median(r.seconds for r in runs),
                   sum(r.n_errors for r in done), sum(r.n_unparsed for r in done),
                   tuple(summarize_features(runs)), tuple(detection), tuple(done))


PLACEMENTS = {"default levels, 20 trials": 20, "default levels, 320 trials": 320,
              "8 levels from α/4 to 3α, 20 trials": 20}
"""The in-process comparison: the default design, the same levels with 16 times the
trials, and the 160 trials placed around the observer's own threshold."""


def _draw_and_fit(job: tuple[str, str, int, int, float, ObserverSpec]
                  ) -> tuple[float | None, bool, bool]:
    """One data set drawn from the observer's ψ without HTTP, fitted: (estimate/true − 1
    or None, whether the interval covers the truth, whether the fit's likelihood is below
    that of the observer's own curve, which a maximum never is)."""
    import numpy as np

    from visioneval.benchmarks.psychophysics.dataset import DEFAULT_LEVELS
    from visioneval.stats.psychometric import psi
    from visioneval.stats.psychometric_fit import fit

    feature, placement, index, resamples, criterion, observer = job
    curve = parse_curves(observer.curves)[feature]
    form: Sigmoid = "logistic" if observer.form == "logistic" else "weibull"
    trials = PLACEMENTS[placement]
    levels = np.asarray(DEFAULT_LEVELS[feature] if placement.startswith("default") else
                        curve.alpha * np.geomspace(0.25, 3.0, 8))
    true_p = np.array([psi(x, curve.alpha, curve.beta, GUESS, curve.lapse, form)
                       for x in levels])
    k = np.random.default_rng([index, FEATURES.index(feature)]).binomial(trials, true_p)
    found = fit(levels.tolist(), k.tolist(), [trials] * len(levels), GUESS, form, criterion,
                resamples=resamples, seed=index)
    fitted = np.clip([psi(x, found.alpha, found.beta, GUESS, found.lapse, form)
                      for x in levels], 1e-12, 1 - 1e-12)

    def log_likelihood(p: np.ndarray) -> float:
        return float((k * np.log(p) + (trials - k) * np.log1p(-p)).sum())

    below = log_likelihood(fitted) < log_likelihood(true_p) - 1e-6
    true = true_thresholds(observer, criterion)[feature]
    if found.threshold is None:
        return None, False, below
    low, high = found.threshold_ci or (math.nan, math.nan)
    return found.threshold / true - 1, low <= true <= high, below


def in_process(observer: ObserverSpec, data_sets: int, resamples: int, workers: int,
               criterion: float = 0.75) -> list[str]:
    """The fits alone, on counts drawn from ψ at the default levels and elsewhere: what the
    design and the fit give without the server, the run and metrics.json."""
    lines = [f"| in-process, {data_sets} data sets | reached | 95% coverage | median error | "
             "fits below the true curve's likelihood |", "|---|---|---|---|---|"]
    jobs = [(feature, placement, i, resamples, criterion, observer)
            for feature in parse_curves(observer.curves) for placement in PLACEMENTS
            for i in range(data_sets)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            done = list(pool.map(_draw_and_fit, jobs, chunksize=8))
    else:
        done = [_draw_and_fit(job) for job in jobs]
    for start in range(0, len(jobs), data_sets):
        feature, placement = jobs[start][:2]
        rows = done[start:start + data_sets]
        errors = [e for e, _, _ in rows if e is not None]
        lines.append(f"| {feature}, {placement} | {len(errors)}/{data_sets} | "
                     f"{100 * sum(c for _, c, _ in rows) / data_sets:.0f}% | "
                     f"{_pct(statistics.median(errors) if errors else None, True)} | "
                     f"{sum(b for _, _, b in rows)} |")
    return lines


def _pct(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    if math.isinf(value):
        return "open"
    return f"{100 * value:+.1f}%" if signed else f"{100 * value:.1f}%"


def table(summary: Summary) -> list[str]:
    lines = [f"| feature (true threshold at {summary.criterion:g}) | reached | 95% coverage | "
             "missed below/above | median error | median abs error | median CI width | "
             "open upper ends | time per run |", "|---|---|---|---|---|---|---|---|---|"]
    for f in summary.features:
        lines.append(
            f"| {f.feature} ({f.true:.3g} {f.unit}) | {f.reached}/{f.runs} | "
            f"{100 * f.coverage:.0f}% | {f.below}/{f.above} | {_pct(f.median_error, True)} | "
            f"{_pct(f.median_abs_error)} | {_pct(f.median_width)} | {f.open_intervals} | "
            f"{f.median_seconds:.1f} s |")
    lines += ["", "| yes/no | estimates | true d′, c | median d′ | median c | d′ coverage | "
              "c coverage | largest abs d′ |", "|---|---|---|---|---|---|---|---|"]
    for d in summary.detection:
        true_c = "-inf" if math.isinf(d.true_c) else f"{d.true_c:+g}"
        lines.append(f"| {d.label} | {d.estimates} | {d.true_dprime:g}, {true_c} | "
                     f"{d.median_dprime:+.2f} | {d.median_c:+.2f} | "
                     f"{100 * d.coverage_dprime:.0f}% | "
                     f"{'-' if d.coverage_c is None else f'{100 * d.coverage_c:.0f}%'} | "
                     f"{d.largest_abs_dprime:.2f} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="observer seeds 0..N-1")
    parser.add_argument("--resamples", type=int, default=1000,
                        help="bootstrap refits per fit (the benchmark's --bootstrap)")
    parser.add_argument("--workers", type=int, default=2, help="runs in parallel")
    parser.add_argument("--flags", default="", help="more `visioneval psychophysics` flags")
    parser.add_argument("--observer", default=DEFAULT_CURVES,
                        help="FEATURE=THRESHOLD:SLOPE:LAPSE,... as `visioneval loopback`")
    parser.add_argument("--observer-form", default="weibull", choices=("weibull", "logistic"))
    parser.add_argument("--observer-dprime", type=float, default=1.5)
    parser.add_argument("--observer-criterion", type=float, default=0.0)
    parser.add_argument("--save", type=Path, help="write every run's figures here (JSON)")
    parser.add_argument("--in-process", type=int, default=0, metavar="N",
                        help="instead of runs: N data sets per feature drawn from ψ and "
                        "fitted in-process, at the default levels and around α")
    args = parser.parse_args()
    observer = ObserverSpec(args.observer, args.observer_form, args.observer_dprime,
                            args.observer_criterion)
    if args.in_process:
        for line in in_process(observer, args.in_process, args.resamples, args.workers):
            print(line)
        return 0
    started = time.perf_counter()
    flags = shlex.split(args.flags)
    with tempfile.TemporaryDirectory(prefix="psychophysics-recovery-") as folder:
        work = Path(folder)
        try:
            parse_flags(flags, work / "data", args.resamples)  # one line, before the data
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        data = write_default_data(work / "data")
        print(f"default stimuli written in {time.perf_counter() - started:.1f} s; "
              f"{args.runs} runs, {args.resamples} bootstrap refits, {args.workers} workers",
              file=sys.stderr, flush=True)
        summary = recover(data, work / "runs", range(args.runs), observer, flags,
                          args.resamples, args.workers)
    if args.save:
        args.save.write_text(json.dumps([asdict(f) for f in summary.figures], indent=1))
    for line in table(summary):
        print(line)
    print(f"\n{summary.runs} runs + 1 always-'yes' run in {time.perf_counter() - started:.0f} s"
          f" ({args.workers} workers); failed requests {summary.n_errors}, unparsed answers "
          f"{summary.n_unparsed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
