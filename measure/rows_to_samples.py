"""What making samples from dataset rows costs per sample (the step SalBench, IllusionBench
and a user's own benchmark share, `visioneval.core.rows`): `benchmark.samples()` over the
synthetic SalBench P3 set and the synthetic IllusionBench set, images read but not sent.

    uv run python measure/rows_to_samples.py

Prints microseconds of CPU per sample, best of five; docs/PERFORMANCE.md records them.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from visioneval.benchmarks.illusionbench.benchmark import build as illusionbench
from visioneval.benchmarks.illusionbench.synth import write_synthetic as illusion_data
from visioneval.benchmarks.salbench.benchmark import build as salbench
from visioneval.benchmarks.salbench.synth import write_synthetic as salbench_data

ROWS = 400


def _per_sample(benchmark, repeat: int = 5) -> float:
    best, n = float("inf"), 0
    for _ in range(repeat):
        start = time.process_time()
        n = sum(1 for _ in benchmark.samples())
        best = min(best, time.process_time() - start)
    return 1e6 * best / n


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        salbench_data(root / "salbench", ROWS, seed=1)
        illusion_data(root / "illusion", ROWS, seed=1)
        cases = {
            "SalBench P3, zero-shot": salbench({"configs": ["P3"],
                                                "data_dir": str(root / "salbench")}),
            "SalBench P3, --prompt both": salbench({"configs": ["P3"], "prompt": "both",
                                                    "data_dir": str(root / "salbench")}),
            "IllusionBench, 3 subsets": illusionbench({"data_dir": str(root / "illusion")}),
        }
        for label, benchmark in cases.items():
            print(f"{label}: {_per_sample(benchmark):.1f} µs per sample")


if __name__ == "__main__":
    main()
