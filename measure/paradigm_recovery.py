"""A classic paradigm's fits recover a known observer, through the whole path.

The paradigm's default dataset is written once (`visioneval data synth-NAME`, seed 0); each
run starts the loopback server with `--answer observer` and the curves given (the run's
index as the observer's seed, so every run's answers are drawn anew), runs the paradigm's
benchmark through real HTTP with its default 1000-refit bootstrap, and reads metrics.json.
For every curve the true value follows from the observer's curve for that condition (the
`paradigm/condition` key first, then `paradigm`):

    forced choice   the threshold: where γ + (1 − γ − λ)·Weibull(x; α, β) reaches the
                    paradigm's criterion (γ = 1 / options)
    comparison      the PSE (the curve's first number) and the JND (its second)
    named function  (`NAME=weber:W:LAPSE`) the figure of the paradigm's own model, the
                    function's parameter (the Weber fraction w), and the threshold: the
                    ratio where λ + (1 − 2λ)·Φ((r − 1)/(w·√(1 + r²))) reaches the criterion
    estimate        the midmean log2 error of the observer's answers (bias, SD, lapse)
                    over the condition's levels, each level as often as the design has
                    it: `--truth integrate` (the default) sums over every whole-number
                    answer with its exact probability (`estimate_distribution`), which
                    is the integral of the rounded Gaussian, no sampling error;
                    `--truth simulate` draws `--truth-draws` answers per level from the
                    observer itself, a check of the first

and `--summary NAME=VALUE` names a summary's true value (an illusion against its control, a
contrast sensitivity function's peak); an estimate's rank correlation with the published
order gets its truth from the true errors, and the share of runs whose order of the
conditions is the true one is printed. With `--at-criterion` a forced choice's first number
is its threshold at the paradigm's criterion rather than the Weibull's α: the observer is
given the α that puts ψ there (a known CSF's thresholds, 1 / its sensitivities, as they are).
Per figure: the share of runs reached, the coverage of the truth by the 95% interval (an
open end counts as infinite; a run not reached covers nothing) ± its binomial error, the
runs whose interval lies wholly below or wholly above the truth, the median error of the
estimate (relative; for a PSE of 0, relative to the true JND) and the median absolute error
in the figure's unit. `--first-run N` starts the observers' seeds at N, so a second batch of
runs is independent of the first.

    uv run python measure/paradigm_recovery.py --paradigm vernier \\
        --observer vernier=0.3:1:0.02 --runs 200
    uv run python measure/paradigm_recovery.py --paradigm contrast --at-criterion \\
        --observer contrast/f8=5.42:3:0.02,contrast/f16=2.78:3:0.02,... \\
        --summary "CSF peak sensitivity=40" --runs 200
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.stats import rankdata

from visioneval import api
from visioneval.core.registry import definition
from visioneval.engine.options import EngineOptions
from visioneval.loopback.observer import (
    Curve,
    Observer,
    answer_observer,
    estimate_answer,
    estimate_distribution,
    parse_curves,
)
from visioneval.loopback.server import ServerScript, ThreadedServer
from visioneval.paradigms.paradigm import Paradigm
from visioneval.paradigms.ranking import NAME as RANK_CORRELATION
from visioneval.stats.midmean import log2_error, midmean, weighted_midmean
from visioneval.stats.psychometric import criterion_level
from visioneval.stats.weber_fit import weber_ratio


@dataclass
class Figure:
    """One figure's recovery over runs."""

    truth: float
    scale: float | None = None  # what an error is relative to when the truth is 0
    covered: int = 0
    below: int = 0  # runs whose interval lies wholly below the truth
    above: int = 0
    reached: int = 0
    runs: int = 0
    estimates: list[float] = field(default_factory=list)

    def add(self, value: float | None, interval: Sequence[float | None] | None) -> None:
        self.runs += 1
        if value is None:
            return
        self.reached += 1
        self.estimates.append(value)
        if interval:
            low = -math.inf if interval[0] is None else interval[0]
            high = math.inf if interval[1] is None else interval[1]
            self.covered += low <= self.truth <= high
            self.below += high < self.truth
            self.above += low > self.truth

    def row(self, name: str) -> str:
        share = self.covered / self.runs
        error = math.sqrt(share * (1 - share) / self.runs)
        median = statistics.median(self.estimates) if self.estimates else math.nan
        relative = (f"{100 * (median - self.truth) / abs(self.truth):+.1f}%" if self.truth
                    else f"{100 * (median - self.truth) / self.scale:+.1f}% of the JND"
                    if self.scale else "-")
        absolute = statistics.median(abs(v - self.truth) for v in self.estimates) \
            if self.estimates else math.nan
        return (f"| {name} | {self.truth:.4g} | {100 * self.reached / self.runs:.0f}% | "
                f"{100 * share:.1f} ± {100 * error:.1f}% | {self.below} / {self.above} | "
                f"{median:.4g} | {relative} | {absolute:.3g} |")


def curve_for(curves: dict[str, Curve], paradigm: str, condition: str) -> Curve | None:
    return curves.get(f"{paradigm}/{condition}") or curves.get(paradigm)


OWN = "own figure"  # the key of a paradigm's own model's figure (`own_figure` in metrics)


def truths(paradigm: str, kind: str, criterion: float, alternatives: int,
           curves: dict[str, Curve], condition: str) -> dict[str, float]:
    curve = curve_for(curves, paradigm, condition)
    if curve is None:
        return {}
    if curve.function == "weber":
        found = weber_ratio(curve.alpha, criterion, curve.lapse)
        return {OWN: curve.alpha, **({} if found is None else {"threshold": found})}
    if kind == "comparison":
        return {"pse": curve.alpha, "jnd": curve.beta}
    found = criterion_level(criterion, curve.alpha, curve.beta, 1 / alternatives,
                            curve.lapse, "weibull")
    return {} if found is None else {"threshold": found}


def at_criterion(curves: dict[str, Curve], criterion: float, alternatives: int
                 ) -> dict[str, Curve]:
    """The curves with each first number, a threshold at `criterion`, turned into the
    Weibull's α (the threshold is α times the criterion's level at α = 1)."""
    out = {}
    for name, c in curves.items():
        unit = criterion_level(criterion, 1.0, c.beta, 1 / alternatives, c.lapse, "weibull")
        if unit is None:
            raise SystemExit(f"--observer {name}: a lapse of {c.lapse:g} never reaches the "
                             f"criterion {criterion:g}")
        out[name] = Curve(c.alpha / unit, c.beta, c.lapse)
    return out


def estimate_truth(curve: Curve, levels: Sequence[float], low: float, high: float,
                   how: str, draws: int, seed: int = 0) -> float:
    """The true midmean log2 error of an estimate observer over equally many trials at each
    level: summed over its exact answer distribution, or from `draws` simulated answers per
    level."""
    if how == "integrate":
        values: list[float] = []
        weights: list[float] = []
        for level in levels:
            answers, probabilities = estimate_distribution(level, curve, low, high)
            values += [log2_error(a, level) for a in answers]
            weights += probabilities
        found = weighted_midmean(values, weights)
    else:
        rng = random.Random(seed)
        found = midmean([log2_error(estimate_answer(level, curve, low, high, rng), level)
                         for level in levels for _ in range(draws)])
    assert found is not None
    return found


def estimate_truths(made: Paradigm, curves: dict[str, Curve], how: str, draws: int
                    ) -> dict[str, float]:
    """Each condition's true midmean error (those the observer has a curve for)."""
    out = {}
    for condition in made.conditions():
        curve = curve_for(curves, made.name, condition.name)
        if curve is None:
            continue
        options = made.draw(condition, condition.levels[0], 0, 0).trial.options
        low, high = (float(o) for o in options)
        out[condition.name] = estimate_truth(curve, condition.levels, low, high, how, draws)
    return out


def true_rank_correlation(made: Paradigm, errors: dict[str, float]) -> float | None:
    """Spearman's ρ of the true errors against the conditions' published ranks."""
    ranked = [(errors[c.name], c.rank) for c in made.conditions()
              if c.rank is not None and c.name in errors]
    if len(ranked) < 3:
        return None
    own = rankdata([e for e, _ in ranked])
    people = rankdata([r for _, r in ranked])
    return round(float(np.corrcoef(own, people)[0, 1]), 12)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paradigm", required=True)
    parser.add_argument("--observer", required=True, help="as `visioneval loopback "
                        "--observer`: NAME=A:B:LAPSE, comma-separated")
    parser.add_argument("--summary", action="append", default=[],
                        help="NAME=VALUE: a summary's true value")
    parser.add_argument("--at-criterion", action="store_true",
                        help="a forced choice's first number is its threshold at the "
                        "paradigm's criterion, not the Weibull's alpha")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--first-run", type=int, default=0,
                        help="the first run's observer seed (default 0)")
    parser.add_argument("--trials", type=int, default=None,
                        help="trials per level (default: the paradigm's)")
    parser.add_argument("--truth", choices=("integrate", "simulate"), default="integrate",
                        help="an estimate's true error: exact sum, or simulated answers")
    parser.add_argument("--truth-draws", type=int, default=200_000,
                        help="simulated answers per level with --truth simulate")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    found = definition(args.paradigm)
    made = found.benchmark_class().paradigm  # type: ignore[union-attr]
    curves = parse_curves(args.observer)
    if args.at_criterion and made.kind == "choice":
        curves = at_criterion(curves, made.criterion, made.alternatives)
    summaries = dict(s.split("=", 1) for s in args.summary)
    errors = (estimate_truths(made, curves, args.truth, args.truth_draws)
              if made.kind == "estimate" else {})
    rho = true_rank_correlation(made, errors)
    if rho is not None and RANK_CORRELATION not in summaries:
        summaries[RANK_CORRELATION] = str(rho)
    true_order = dict(zip(errors, rankdata(list(errors.values())), strict=True))
    in_order = 0
    figures: dict[tuple[str, str], Figure] = {}
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "data"
        found.synth(data, args.trials or 0, 0)  # type: ignore[attr-defined]
        for run in range(args.first_run, args.first_run + args.runs):
            observer = Observer(curves, seed=run)
            with ThreadedServer(ServerScript(answer=answer_observer(observer))) as server:
                result = api.run(args.paradigm, model="m", base_url=f"{server.base_url}/v1",
                                 options={"data": str(data)}, out=Path(scratch) / f"r{run}",
                                 engine=EngineOptions(cache_path=None, concurrency=32),
                                 report=False)
            metrics = result.metrics
            in_order += bool(true_order) and all(
                c.get("rank") == true_order.get(c["condition"]) for c in metrics["curves"])
            for c in metrics["curves"]:
                if c["status"] == "control":  # a target alone: its points, no fit
                    continue
                true = ({"error": errors[c["condition"]]} if c["condition"] in errors else
                        truths(made.name, made.kind, made.criterion, made.alternatives,
                               curves, c["condition"]))
                for name, value in true.items():
                    own = c.get("own_figure") or {}
                    label = own.get("name", name) if name == OWN else name
                    scale = true.get("jnd") if name == "pse" else None
                    figure = figures.setdefault((c["condition"], label), Figure(value, scale))
                    figure.add(*((own.get("value"), own.get("ci95")) if name == OWN else
                                 (c.get(name), c.get(f"{name}_ci95"))))
            for s in metrics.get("summaries", []):
                if s["name"] in summaries:
                    figure = figures.setdefault(("summary", s["name"]),
                                                Figure(float(summaries[s["name"]])))
                    figure.add(s.get("value"), s.get("ci95"))
    fitted = [c for c in metrics["curves"] if c["status"] != "control"]
    trials = sum(c["n"] for c in fitted) / max(len(fitted), 1)
    print(f"{made.title}: {args.runs} runs through the loopback observer ({args.observer}), "
          f"{trials:.0f} trials a curve")
    print("| figure | truth | reached | 95% interval covers | interval below / above the "
          "truth | median estimate | median error | median absolute error |")
    print("|---|---|---|---|---|---|---|---|")
    for (condition, name), figure in figures.items():
        print(figure.row(f"{condition} {name}"))
    if true_order:
        print(f"\nthe conditions' order is the true one in {in_order} of {args.runs} runs "
              f"(truth by --truth {args.truth})")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
