"""What checking journal records against the data's sample ids costs: noting each sample's
id as the engine reads it (`IdCollector.watch`, on the hot path) and, at the end, looking up
each record's id (`NotInData.leave_out`, in `finish`), at a full-size run's 130,020 samples.

    uv run python measure/data_ids.py

Prints microseconds per sample for both, best of five; docs/PERFORMANCE.md records them.
"""

from __future__ import annotations

import time
from pathlib import Path

from visioneval.core.idset import IdCollector
from visioneval.core.records import Record, Response
from visioneval.core.store import RunStore
from visioneval.runs.session import NotInData

N = 130_020


def _best(run, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    ids = [f"IN/scene-{i:06d}/shape" for i in range(N)]
    items = [(i, None) for i in ids]

    def watch() -> None:
        collector = IdCollector()
        for _ in collector.watch(items, lambda item: item[0]):
            pass

    def plain() -> None:
        for _ in iter(items):
            pass

    watched = _best(watch) - _best(plain)
    collector = IdCollector()
    for _ in collector.watch(items, lambda item: item[0]):
        pass
    data_ids = collector.ids()
    records = [Record(id=i, group="IN", target="x", response=Response(text="x"))
               for i in ids]
    store = RunStore(Path("."), {})

    def leave_out() -> None:
        for _ in NotInData(store, data_ids).leave_out(records):
            pass

    def no_check() -> None:
        for _ in NotInData(store, None).leave_out(records):
            pass

    checked = _best(leave_out) - _best(no_check)
    print(f"| noting each sample's id as it is read | {watched / N * 1e6:.2f} |")
    print(f"| looking up each record's id at the end | {checked / N * 1e6:.2f} |")
    print(f"({N:,} samples: {watched:.2f} s and {checked:.2f} s in all)")


if __name__ == "__main__":
    main()
