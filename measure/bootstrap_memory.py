"""Peak memory of one bootstrap interval as the number of samples grows: the resample
counts are drawn a chunk of resamples at a time, and a chunk's arrays are resamples x n.

    uv run python measure/bootstrap_memory.py --sizes 10000,50000,130000

Each size is measured with the chunk rule (`stats.bootstrap.CHUNK_CELLS`) and with the rule
switched off (50 resamples a chunk whatever n), plain and clustered (3 rows an image), on
rows of SalBench's macro-F1 width (3 classes: 9 numbers a sample)."""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from visioneval.stats import bootstrap
from visioneval.stats.bootstrap import Clusters, replicates


def _peak(rows: np.ndarray, clusters: Clusters | None) -> tuple[float, float]:
    def statistic(sums: np.ndarray, n: int) -> np.ndarray:
        return sums[:, :1] / n

    tracemalloc.start()
    started = time.perf_counter()
    replicates(rows, statistic, clusters=clusters)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6, seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,50000,130000")
    sizes = [int(x) for x in parser.parse_args().sizes.split(",")]
    rng = np.random.default_rng(0)
    print("| samples | interval | peak MB, 50 a chunk | peak MB, chunk rule | s, 50 / rule |")
    print("|---:|---|---:|---:|---:|")
    for n in sizes:
        rows = (rng.random((n, 9)) < 0.5).astype(np.float64)
        index = np.arange(n, dtype=np.intp) // 3
        for name, clusters in (("plain", None),
                               ("clustered", Clusters("image", index, int(index[-1]) + 1))):
            kept = bootstrap.CHUNK_CELLS
            bootstrap.CHUNK_CELLS = 10**12  # the rule off: always CHUNK resamples
            before, before_s = _peak(rows, clusters)
            bootstrap.CHUNK_CELLS = kept
            after, after_s = _peak(rows, clusters)
            print(f"| {n:,} | {name} | {before:.0f} | {after:.0f} | "
                  f"{before_s:.1f} / {after_s:.1f} |")


if __name__ == "__main__":
    main()
