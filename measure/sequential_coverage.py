"""Does `--target-ci`'s stopped interval cover the truth, and how many samples does it take?

Simulated runs, no model: each run draws 0/1 outcomes with a known true accuracy p (seeded),
feeds them to the stopping rule object the engine uses (`SequentialStop`, through its
`observe`, in order) and stops as the engine does once the rule is satisfied. Per p and
target width W it prints the share of runs whose final interval covers p, the mean and
95th percentile of the samples taken, and the n of a fixed-n run whose Wilson interval
would be W wide (the price of being allowed to look after every sample).

    uv run python measure/sequential_coverage.py               # 1000 runs per cell
    uv run python measure/sequential_coverage.py --runs 200 --widths 10

Figures: docs/stopping.md."""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from visioneval.core.records import Record, Response
from visioneval.engine.stopping import SequentialStop, StoppingRule

Z = 1.959963984540054


def wilson_n(p: float, width: float) -> int:
    """The smallest n whose 95% Wilson interval around p is at most `width` wide."""
    n = 1
    while True:
        half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
        if 2 * half <= width:
            return n
        n += 1 if n < 100 else max(1, n // 200)


def one_run(p: float, width: float, min_samples: int, seed: int, cap: int) -> tuple[int, bool]:
    """(samples taken, whether the final interval covers p) of one simulated run."""
    rng = np.random.default_rng(seed)
    outcomes = (rng.random(cap) < p).astype(float)
    rule = SequentialStop(StoppingRule(width, min_samples, seed),
                          lambda record: float(record.scores["s"]["correct"]))
    ok = Response(text="x")
    for i, x in enumerate(outcomes):
        record = Record.model_construct(id=str(i), group="g", target=None, response=ok,
                                        metadata={}, prompt=[], parsed={},
                                        scores={"s": {"correct": x}})
        rule.observe(i, record)
        if rule.satisfied:
            break
    info = rule.info()
    return info.n, info.ci[0] <= p <= info.ci[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--widths", type=float, nargs="+", default=[10.0, 5.0])
    parser.add_argument("--accuracies", type=float, nargs="+",
                        default=[0.5, 0.7, 0.9, 0.97])
    parser.add_argument("--min-samples", type=int, default=100)
    args = parser.parse_args()
    print(f"{args.runs} seeded runs per cell; min {args.min_samples} samples; 95% level")
    print("| W (points) | true p | covered | mean n | 95th pct n | fixed-n Wilson n "
          "| mean n / Wilson n | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for width in args.widths:
        for p in args.accuracies:
            started = time.perf_counter()
            cap = 40 * wilson_n(0.5, width / 100)
            results = [one_run(p, width, args.min_samples, seed, cap)
                       for seed in range(args.runs)]
            ns = np.array([n for n, _ in results])
            covered = sum(c for _, c in results) / len(results)
            fixed = wilson_n(p, width / 100)
            print(f"| {width:g} | {p:g} | {covered:.1%} | {ns.mean():.0f} | "
                  f"{np.percentile(ns, 95):.0f} | {fixed} | {ns.mean() / fixed:.2f} | "
                  f"{time.perf_counter() - started:.0f} |", flush=True)


if __name__ == "__main__":
    main()
