"""What `--epochs` adds to a run's end: the repeated answers' summary (item means, split,
intervals) beside the benchmark's own metrics, read in the same pass over the journal.

Makes MMVP's synthetic data, runs it offline with the builtin random model and K epochs,
then times, over the same journal, the benchmark's summary of the first answers alone and
the whole summary with the repeated answers (median of 5 passes each), and the peak memory
of the whole summary (tracemalloc).

Run by hand:
    uv run python measure/epochs_cost.py --epochs 10
The figures go into docs/PERFORMANCE.md.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

from visioneval import api
from visioneval.core import registry
from visioneval.core.epoch_ids import epoch_of
from visioneval.core.store import RunStore
from visioneval.epochs.family import rebuilt
from visioneval.runs.live_summary import summary_of


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--rows", type=int, default=150, help="MMVP pairs to make")
    args = parser.parse_args(argv)
    definition = registry.definition("mmvp")
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "data"
        definition.synth(data, args.rows, 0)  # type: ignore[attr-defined]
        run = Path(scratch) / "run"
        options = {"data_dir": str(data), "protocol": "paper"}
        api.run("mmvp", model="random", backend="builtin", options=options, out=run,
                epochs=args.epochs, report=False)
        store = RunStore.open(run)
        benchmark = rebuilt(definition.build_to_read(dict(store.info.options)), store.info,
                            definition)
        inner = benchmark.inner  # type: ignore[attr-defined]
        records = sum(1 for _ in store.iter_latest())

        def first_only() -> None:
            inner.summarize(r for r in store.iter_latest() if epoch_of(r) == 1)

        def whole() -> None:
            summary_of(benchmark, store.iter_latest())

        timings = {}
        for name, work in (("first answers only", first_only), ("with the epochs", whole)):
            times = []
            for _ in range(5):
                started = time.perf_counter()
                work()
                times.append(time.perf_counter() - started)
            timings[name] = statistics.median(times)
        tracemalloc.start()
        whole()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(f"{records} records ({records // args.epochs} items x {args.epochs} epochs)")
    for name, seconds in timings.items():
        print(f"  {name:20} {1000 * seconds:8.0f} ms")
    extra = timings["with the epochs"] - timings["first answers only"]
    print(f"  the epochs add {1000 * extra:.0f} ms, {1e6 * extra / records:.1f} µs a record; "
          f"peak memory of the whole summary {peak / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
