"""`visioneval layout --executor ray`: the per-pair metrics as Ray tasks.

The same `evaluate_pair` the local process pool runs, over chunks of pairs; results come
back in input order, so the results file is the local run's. The workers read the pair
files themselves: on a cluster the CANVAS folder must be on a filesystem every node sees.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console

from visioneval.distributed.ray_runner import TASK_RETRIES, connect, import_ray, probe
from visioneval.layout.pairs import Pair
from visioneval.layout.pipeline import SampleOptions

CHUNKS_PER_CPU = 4  # enough chunks to balance uneven pairs, few enough to keep overhead low


def evaluate_chunk(pairs: list[Pair], options: SampleOptions) -> list[dict[str, Any]]:
    """In a Ray worker: the pairs' metrics, as the local pool computes them."""
    import os

    from visioneval.layout.pipeline import evaluate_pair

    os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core per task, as in the pool
    if options.viz_dir:
        import matplotlib

        matplotlib.use("Agg")
    return [evaluate_pair(pair, options) for pair in pairs]


def run_samples_on_ray(pairs: list[Pair], options: SampleOptions, address: str | None,
                       progress: Callable[[dict[str, Any]], None], err: Console
                       ) -> list[dict[str, Any]]:
    ray = import_ray()
    started = connect(ray, address)
    try:
        probe(ray)
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        size = max(1, min(64, -(-len(pairs) // (cpus * CHUNKS_PER_CPU))))
        task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(evaluate_chunk)
        refs = {task.remote(pairs[i:i + size], options): i for i in range(0, len(pairs), size)}
        err.print(f"{len(pairs)} pairs in {len(refs)} Ray tasks ({cpus} CPUs)",
                  highlight=False, soft_wrap=True)
        results: list[dict[str, Any] | None] = [None] * len(pairs)
        pending = list(refs)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    start = refs[ref]
                    for offset, sample in enumerate(ray.get(ref)):
                        results[start + offset] = sample
                        progress(sample)
        except KeyboardInterrupt:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
    finally:
        if started:
            ray.shutdown()
    return [r for r in results if r is not None]
