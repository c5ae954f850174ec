"""Threshold recovery for BlindTest: a simulated observer with known psychometric functions
(`benchmarks.blindtest.observer`) answers every question of a synthetic BlindTest set with
dense circle gaps, and the run's own scoring and metrics (`metrics.summarize`) fit the
thresholds under each protocol. Over many observer seeds: how often a threshold is
reached, how often its 95% interval covers the true one, the median error and the median
interval width.

    uv run python measure/blindtest_threshold_recovery.py --runs 100 --per-level 40
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from statistics import median

from visioneval.benchmarks.blindtest import metrics
from visioneval.benchmarks.blindtest.benchmark import build
from visioneval.benchmarks.blindtest.magnitude import MAGNITUDES
from visioneval.benchmarks.blindtest.observer import Curve, records
from visioneval.benchmarks.blindtest.spec import PROTOCOLS
from visioneval.benchmarks.blindtest.synth import write_synthetic

GAPS = (0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2, 0.3)  # diameters
CURVES = {"gap": Curve(0.06, 2.5, 0.02),  # threshold 0.053 diameters
          "line distance": Curve(3.0, 2.0, 0.02)}  # threshold 3.05 grid cells


def one_run(args: tuple[str, int]) -> tuple[dict[tuple[str, str], dict], float]:
    data, seed = args
    bench = build({"data_dir": data, "labels": "original"})
    started = time.perf_counter()
    found = metrics.summarize(records(bench, CURVES, seed), bench.options.protocols,
                              bench.options.label_sets)
    return ({(p, m.name): found[p]["original"]["thresholds"][m.name]
             for p in PROTOCOLS for m in MAGNITUDES}, time.perf_counter() - started)


def table(runs: list[dict[tuple[str, str], dict]]) -> list[str]:
    out = ["| magnitude (true threshold) | protocol | reached | 95% coverage | median error "
           "| median CI width |", "|---|---|---|---|---|---|"]
    for m in MAGNITUDES:
        true = CURVES[m.name].threshold(m)
        for p in PROTOCOLS:
            blocks = [r[(p, m.name)] for r in runs]
            reached = [b for b in blocks if b.get("threshold") is not None]
            covered = sum(1 for b in reached if b.get("threshold_ci95") and
                          b["threshold_ci95"][0] <= true <=
                          (b["threshold_ci95"][1] or float("inf")))
            errors = [b["threshold"] / true - 1 for b in reached]
            widths = [((b["threshold_ci95"][1] or float("inf")) - b["threshold_ci95"][0]) / true
                      for b in reached if b.get("threshold_ci95")]
            out.append(f"| {m.title} ({true:.3g} {m.unit}) | {p} | {len(reached)}/{len(runs)} "
                       f"| {100 * covered / len(runs):.0f}% | "
                       f"{100 * median(errors):+.1f}% | {100 * median(widths):.0f}% |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--per-level", type=int, default=40, help="circle rows per gap")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder)
        _, rows = write_synthetic(data, args.per_level * len(GAPS), seed=0, gaps=GAPS)
        print(f"{rows} rows: {args.per_level * len(GAPS)} per task, circles at {len(GAPS)} "
              f"gaps ({GAPS[0]:g} to {GAPS[-1]:g} diameters); {args.runs} observer seeds")
        with ProcessPoolExecutor(args.workers) as pool:
            done = list(pool.map(one_run, [(str(data), seed) for seed in range(args.runs)]))
    for line in table([r for r, _ in done]):
        print(line)
    print(f"median time per summarize (6 fits, 1000 refits each): "
          f"{median(t for _, t in done):.2f} s")


if __name__ == "__main__":
    main()
