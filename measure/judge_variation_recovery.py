"""Does the split of a judge's mean score recover known between- and within-case variances?
Seeded case sets with a known variance of the cases' own scores (between) and of one
verdict about its case's score (within), each case asked K times, go through
`stats.variance_split.split` as `visioneval evaluate --judge-samples K` sends them; we count
how often each 95% interval covers the truth, with its Monte Carlo standard error, and how
far the point estimates and the "samples a case for under 10%" land from the truth.

    uv run python measure/judge_variation_recovery.py [--runs 1000]

A case's own score is m + b with b ~ N(0, between); a verdict is that plus e ~ N(0, within)
(scores on the 0-1 scale, not clipped). The last row is the loopback's `judge-varies`:
levels 3-7 out of 10 (uniform, between 0.02) and offsets of -2 to +2 points (uniform,
within 0.02), integers as a judge gives them."""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from visioneval.stats.variance_split import TARGET_SHARE, split

Draw = Callable[[np.random.Generator, int, int], np.ndarray]  # (rng, cases, K) -> verdicts


def normal(between: float, within: float) -> Draw:
    def draw(rng: np.random.Generator, cases: int, k: int) -> np.ndarray:
        own = 0.6 + rng.normal(0, math.sqrt(between), size=(cases, 1))
        return own + rng.normal(0, math.sqrt(within), size=(cases, k))

    return draw


def loopback(rng: np.random.Generator, cases: int, k: int) -> np.ndarray:
    """As the loopback's judge-varies scores: level 3-7 plus an offset of -2 to +2."""
    levels = rng.integers(3, 8, size=(cases, 1))
    return (levels + rng.integers(-2, 3, size=(cases, k))) / 10


SCENARIOS = [  # (name, cases, K, between, within, draw)
    ("10 cases x 4, 0.02 / 0.02", 10, 4, 0.02, 0.02, normal(0.02, 0.02)),
    ("20 cases x 2, 0.02 / 0.02", 20, 2, 0.02, 0.02, normal(0.02, 0.02)),
    ("20 cases x 4, 0.02 / 0.02", 20, 4, 0.02, 0.02, normal(0.02, 0.02)),
    ("40 cases x 4, 0.02 / 0.02", 40, 4, 0.02, 0.02, normal(0.02, 0.02)),
    ("100 cases x 4, 0.02 / 0.02", 100, 4, 0.02, 0.02, normal(0.02, 0.02)),
    ("40 cases x 4, 0.005 / 0.04 (judge-heavy)", 40, 4, 0.005, 0.04, normal(0.005, 0.04)),
    ("40 cases x 8, 0.04 / 0.005 (case-heavy)", 40, 8, 0.04, 0.005, normal(0.04, 0.005)),
    ("40 cases x 4, loopback judge-varies", 40, 4, 0.02, 0.02, loopback),
]


def needed(between: float, within: float) -> int:
    """The true fewest samples a case for a share of at most TARGET_SHARE."""
    return max(1, math.ceil(within * (1 - TARGET_SHARE) / (TARGET_SHARE * between)))


def cover_cell(hits: list[bool]) -> str:
    """Coverage in % with its Monte Carlo standard error."""
    p = statistics.fmean(hits)
    return f"{100 * p:.1f} ({100 * math.sqrt(p * (1 - p) / len(hits)):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    args = parser.parse_args()
    started = time.perf_counter()
    print("| cases x samples, between / within | true share | between covered | within "
          "covered | share covered | within: mean estimate / truth | samples for < 10%: truth, "
          "median [IQR] |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, cases, k, between, within, draw in SCENARIOS:
        share = (within / k) / (between + within / k)
        hits: dict[str, list[bool]] = {"between": [], "within": [], "share": []}
        estimates, needs = [], []
        for seed in range(args.runs):
            verdicts = draw(np.random.default_rng(seed), cases, k)
            found = split(verdicts.sum(axis=1), (verdicts ** 2).sum(axis=1),
                          np.full(cases, float(k)))
            assert found is not None
            for key, part, truth in (("between", found.between, between),
                                     ("within", found.within, within),
                                     ("share", found.within_share, share)):
                hits[key].append(part.ci95 is not None and
                                 part.ci95[0] <= truth <= part.ci95[1])
            estimates.append(found.within.value / within)
            need = found.answers_for_share()
            needs.append(math.inf if need is None else need)
        q1, mid, q3 = np.percentile(needs, [25, 50, 75])
        spread = statistics.stdev(estimates) / math.sqrt(len(estimates))
        print(f"| {name} | {100 * share:.0f}% | {cover_cell(hits['between'])} | "
              f"{cover_cell(hits['within'])} | {cover_cell(hits['share'])} | "
              f"{statistics.fmean(estimates):.3f} ({spread:.3f}) | "
              f"{needed(between, within)}, {mid:.0f} [{q1:.0f}, {q3:.0f}] |")
    print(f"\n{args.runs} runs a row; coverage of the 95% intervals in % (Monte Carlo "
          f"standard error); {time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
