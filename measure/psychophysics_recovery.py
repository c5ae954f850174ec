"""Parameter recovery for the psychophysics fits: simulated observers with known α, β, λ per
feature answer by drawing from ψ (Wichmann & Hill 2001) at each level, seeded. Reports the
95% interval's coverage of the true threshold (ψ = 0.75, 3 alternatives, γ = 1/3), the
median relative error of the estimate, the same for Psi-method placement (Kontsevich &
Tyler 1999) at equal and smaller budgets, d′/c recovery, and the time per fit.

    uv run python measure/psychophysics_recovery.py --runs 100 --resamples 1000
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from statistics import NormalDist, median

import numpy as np

from visioneval.stats.adaptive import PsiTrack
from visioneval.stats.detection import dprime
from visioneval.stats.psychometric import criterion_level, psi
from visioneval.stats.psychometric_fit import fit

GUESS = 1 / 3
LEVELS, TRIALS = 8, 40  # constant stimuli: 8 levels x 40 trials = 320 trials per feature
BATCH = 8  # Psi-method proposals per round (requests in flight)
OBSERVERS = {  # feature: (α, β, λ) in the feature's unit
    "orientation (degrees)": (12.0, 2.5, 0.02),
    "color (ΔE00)": (8.0, 2.0, 0.04),
    "size (log area ratio)": (0.2, 3.0, 0.01),
}


def levels_for(alpha: float, count: int) -> np.ndarray:
    return alpha * np.geomspace(0.25, 3.0, count)


def constant(args: tuple[str, int, int]) -> tuple[float, float, float, bool, float]:
    feature, seed, resamples = args
    alpha, beta, lapse = OBSERVERS[feature]
    rng = np.random.default_rng(seed)
    x = levels_for(alpha, LEVELS)
    k = rng.binomial(TRIALS, [psi(v, alpha, beta, GUESS, lapse) for v in x])
    started = time.perf_counter()
    found = fit(x, k, [TRIALS] * LEVELS, GUESS, resamples=resamples, seed=seed)
    return _summary(found, alpha, beta, lapse) + (time.perf_counter() - started,)


def adaptive(args: tuple[str, int, int, int]) -> tuple[float, float, float, bool, float]:
    feature, seed, resamples, budget = args
    alpha, beta, lapse = OBSERVERS[feature]
    rng = np.random.default_rng(seed + 10_000)
    track = PsiTrack(levels_for(alpha, 24), GUESS)
    started = time.perf_counter()
    for _ in range(budget // BATCH):
        for level in track.propose(BATCH):
            track.record(level, bool(rng.random() < psi(level, alpha, beta, GUESS, lapse)))
    found = fit(*track.counts(), GUESS, resamples=resamples, seed=seed)
    return _summary(found, alpha, beta, lapse) + (time.perf_counter() - started,)


def _summary(found, alpha, beta, lapse) -> tuple[float, float, float, bool]:
    true = criterion_level(0.75, alpha, beta, GUESS, lapse)
    if found.threshold is None or found.threshold_ci is None:
        return float("nan"), float("nan"), float("nan"), False
    low, high = found.threshold_ci
    return (found.threshold / true - 1, (high - low) / true, float(low <= true <= high),
            True)


def report(name: str, rows: list) -> str:
    reached = [r for r in rows if r[3]]
    errors = [r[0] for r in reached]
    widths = [r[1] for r in reached if np.isfinite(r[1])]
    coverage = sum(r[2] for r in reached) / len(rows)
    return (f"| {name} | {len(reached)}/{len(rows)} | {100 * coverage:.0f}% | "
            f"{100 * median(errors):+.1f}% | {100 * median(np.abs(errors)):.1f}% | "
            f"{100 * median(widths):.0f}% | {1000 * median(r[4] for r in rows):.0f} ms |")


def detection(runs: int) -> list[str]:
    rng = np.random.default_rng(5)
    lines = []
    yes = dprime(100, 100, 100, 100)
    lines.append(f"always 'yes' (100 signal, 100 noise): d' = {yes.dprime:+.3f}, "
                 f"c = {yes.criterion:+.2f}")
    normal = NormalDist()
    for d, c in ((1.0, 0.0), (1.5, 0.3), (2.5, -0.4)):
        hit, fa = normal.cdf(d / 2 - c), normal.cdf(-d / 2 - c)
        found = [dprime(int(rng.binomial(100, hit)), 100, int(rng.binomial(100, fa)), 100)
                 for _ in range(runs)]
        cover_d = np.mean([f.dprime_ci[0] <= d <= f.dprime_ci[1] for f in found])
        cover_c = np.mean([f.criterion_ci[0] <= c <= f.criterion_ci[1] for f in found])
        mid_d, mid_c = median(f.dprime for f in found), median(f.criterion for f in found)
        lines.append(f"d' = {d}, c = {c:+} (100 + 100 trials, {runs} runs): median d' "
                     f"{mid_d:.2f}, c {mid_c:+.2f};"
                     f" coverage d' {100 * cover_d:.0f}%, c {100 * cover_c:.0f}%")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print("| placement, feature | reached | 95% coverage | median error | median abs error "
          "| median CI width | time per experiment |")
    print("|---|---|---|---|---|---|---|")
    with ProcessPoolExecutor(args.workers) as pool:
        for feature in OBSERVERS:
            jobs = [(feature, seed, args.resamples) for seed in range(args.runs)]
            print(report(f"constant 8x40 = 320, {feature}", list(pool.map(constant, jobs))),
                  flush=True)
            for budget in (320, 240, 160):
                jobs4 = [(feature, seed, args.resamples, budget) for seed in range(args.runs)]
                print(report(f"Psi {budget}, {feature}", list(pool.map(adaptive, jobs4))),
                      flush=True)
    for line in detection(args.runs * 2):
        print(line)


if __name__ == "__main__":
    main()
