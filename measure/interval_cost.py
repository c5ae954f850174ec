"""What the bootstrap intervals cost in `finish`: one SalBench parser block (P3, 3 classes;
O3, 7 classes) of N samples, 1000 resamples, time and the memory of the per-sample rows.

    uv run python measure/interval_cost.py
"""

from __future__ import annotations

import random
import time
import tracemalloc

from visioneval.benchmarks.salbench.spec import CONFIGS
from visioneval.metrics.labelsets import ParserTally, sample_scores


def block(n: int, config: str) -> tuple[float, float, float]:
    classes = CONFIGS[config].classes
    rng = random.Random(0)
    tracemalloc.start()
    with_ids, without = ParserTally(), ParserTally()
    started = time.perf_counter()
    for i in range(n):
        pred, gold = {rng.choice(classes)}, {rng.choice(classes)}
        with_ids.add(pred, gold, sample_scores(pred, gold), classes, f"{config}/img{i}")
    kept = tracemalloc.get_traced_memory()[0] / 1e6
    tracemalloc.stop()
    started = time.perf_counter()
    with_ids.result(classes, 0)
    with_intervals = time.perf_counter() - started
    rng = random.Random(0)
    for _ in range(n):
        pred, gold = {rng.choice(classes)}, {rng.choice(classes)}
        without.add(pred, gold, sample_scores(pred, gold), classes)
    started = time.perf_counter()
    without.result(classes, 0)
    return with_intervals, time.perf_counter() - started, kept


def main() -> None:
    print("| config | samples | result() with intervals s | without s | rows kept MB |")
    print("|---|---:|---:|---:|---:|")
    for config in ("P3", "O3"):
        for n in (2589, 16000, 130000):
            with_ci, without, kept = block(n, config)
            print(f"| {config} | {n:,} | {with_ci:.2f} | {without:.4f} | {kept:.1f} |")


if __name__ == "__main__":
    main()
