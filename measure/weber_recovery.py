"""Recovering a known Weber fraction with the fit alone: simulated observers of the standard
model, P(correct) = λ + (1 − 2λ)·Φ((r − 1)/(w·√(1 + r²))), answer a numerosity design's
trials (binomial counts at each ratio), and `fit_weber` fits each run with its 1000
parametric-bootstrap refits, as a run of `visioneval numerosity` does per condition.

Designs: the default one (the numerosity paradigm's 9 ratios from 13/12 to 3, 16 trials
each) and the one it replaced (8 ratios from 13/12 to 2, 18 trials each), which shows what
the two catch-like ratios 2.5 and 3 buy: a better-estimated lapse rate, so a smaller
downward error of w.

Per observer and design: the share of runs reached; the coverage of the true w by the 95%
interval (an open end counts as infinite; a run not reached covers nothing) ± its binomial
error, with how many intervals missed below and above; the coverage of the true threshold
(the ratio told apart 75% of the time, lapses included); the median error of w over the
reached runs; and the same two for the maximum-likelihood w with the refits' percentile
interval not moved by the bootstrap's bias correction (the fit without it).
`measure/paradigm_recovery.py` does the same through HTTP, stimuli and all, for one
observer.

    uv run python measure/weber_recovery.py --runs 500
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from visioneval.stats.weber_fit import fit_weber, weber_psi, weber_ratio

DEFAULT = (13 / 12, 11 / 10, 8 / 7, 6 / 5, 4 / 3, 3 / 2, 2.0, 5 / 2, 3.0)
TO_TWO = (13 / 12, 11 / 10, 8 / 7, 6 / 5, 4 / 3, 3 / 2, 5 / 3, 2.0)


@dataclass(frozen=True)
class Case:
    design: str
    ratios: tuple[float, ...]
    trials: int
    w: float
    lapse: float


CASES = (
    *(Case("9 ratios to 3 x 16 (default)", DEFAULT, 16, w, 0.02)
      for w in (0.1, 0.15, 0.2, 0.25, 0.3, 0.4)),
    Case("9 ratios to 3 x 16 (default)", DEFAULT, 16, 0.2, 0.0),
    Case("9 ratios to 3 x 16 (default)", DEFAULT, 16, 0.2, 0.05),
    Case("8 ratios to 2 x 18", TO_TWO, 18, 0.2, 0.02),
    Case("8 ratios to 2 x 18", TO_TWO, 18, 0.35, 0.02),
)


def covers(interval: Sequence[float | None] | None, truth: float) -> int:
    """-1 below the interval, 1 above it, 0 inside (an open end is infinite)."""
    if interval is None:
        return 2
    low = -math.inf if interval[0] is None else interval[0]
    high = math.inf if interval[1] is None else interval[1]
    return -1 if truth < low else 1 if truth > high else 0


def run(case: Case, runs: int) -> str:
    rng = np.random.default_rng(round(case.w * 1000 + case.lapse * 100 + case.trials))
    p = [weber_psi(r, case.w, case.lapse) for r in case.ratios]
    threshold = weber_ratio(case.w, 0.75, case.lapse)
    estimates: list[float] = []
    fitted: list[float] = []
    where = {-1: 0, 0: 0, 1: 0, 2: 0}
    held = plain = 0
    for i in range(runs):
        found = fit_weber(case.ratios, rng.binomial(case.trials, p).tolist(),
                          [case.trials] * len(case.ratios), seed=i)
        if found.w is None or found.fitted_w is None:
            continue
        estimates.append(found.w)
        fitted.append(found.fitted_w)
        where[covers(found.w_ci, case.w)] += 1
        held += threshold is not None and covers(found.threshold_ci, threshold) == 0
        back = found.fitted_w / found.w  # the correction's factor, undone
        low, high = np.quantile(np.asarray(found.w_draws) * back, [0.025, 0.975],
                                method="inverted_cdf")
        plain += covers((None if found.w_ci is None or found.w_ci[0] is None else low,
                         None if found.w_ci is None or found.w_ci[1] is None else high),
                        case.w) == 0
    share = where[0] / runs
    error = math.sqrt(share * (1 - share) / runs)

    def median_error(values: list[float]) -> str:
        found = statistics.median(values) if values else math.nan
        return f"{100 * (found - case.w) / case.w:+.1f}%"

    return (f"| {case.design} | {case.w:g} | {case.lapse:g} | {runs} | "
            f"{100 * len(estimates) / runs:.0f}% | {100 * share:.1f} ± {100 * error:.1f}% "
            f"({where[1]} above, {where[-1]} below) | {100 * held / runs:.1f}% | "
            f"{median_error(estimates)} | {100 * plain / runs:.1f}% | "
            f"{median_error(fitted)} |")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print("| design | w | λ | runs | reached | 95% interval covers w (truth above, below) | "
          "covers the threshold | median error of w | uncorrected: covers | uncorrected: "
          "median error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case in CASES:
        print(run(case, args.runs), flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
