"""Threshold intervals against the tested range: a simulated observer (the recovery
scripts' ψ, Wichmann & Hill 2001) answers at levels 4..14 with a logistic F, seeded; each
run is fitted with `visioneval.stats.psychometric_fit.fit` and its parametric-bootstrap
interval. Counts the reached fits whose interval starts below the lowest tested level, below
0, or is open at the lower end ("below the tested levels"), and the lowest number printed.

    uv run python measure/threshold_interval_range.py --runs 200 --resamples 200
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from visioneval.stats.psychometric import psi
from visioneval.stats.psychometric_fit import fit

GUESS = 1 / 3
LEVELS = np.arange(4.0, 15.0)  # 4, 5, ..., 14
TRIALS = 20
OBSERVER = (4.0, 0.3, 0.02)  # logistic α, β, λ: ψ reaches 0.75 near 6.0, a shallow rise


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=200)
    args = parser.parse_args()
    alpha, beta, lapse = OBSERVER
    p = [psi(v, alpha, beta, GUESS, lapse, "logistic") for v in LEVELS]
    reached = below_lowest = below_zero = open_low = open_high = 0
    lowest_shown = math.inf
    for seed in range(args.runs):
        k = np.random.default_rng(seed).binomial(TRIALS, p)
        found = fit(LEVELS, k, [TRIALS] * len(LEVELS), GUESS, "logistic",
                    resamples=args.resamples, seed=seed)
        if found.threshold_ci is None:
            continue
        reached += 1
        low, high = found.threshold_ci
        open_low += math.isinf(low)
        open_high += math.isinf(high)
        if math.isfinite(low):
            below_lowest += low < LEVELS[0]
            below_zero += low < 0
            lowest_shown = min(lowest_shown, low)
    print(f"{args.runs} runs, {reached} reached with an interval "
          f"({args.resamples} refits each)")
    print(f"lower end shown below the lowest tested level {LEVELS[0]:g}: {below_lowest}")
    print(f"lower end shown below 0: {below_zero}")
    print(f"lowest number shown as a lower end: {lowest_shown:.3g}")
    print(f"lower end open (below the tested levels): {open_low}; upper end open: "
          f"{open_high}")


if __name__ == "__main__":
    main()
