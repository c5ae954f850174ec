"""What scoring and tallying one SalBench answer costs, in process: `SalBench.score` (both
parsers) and `ConfigTally.add` (the bootstrap of `result()` left out), over N P3 records
with varied answers (the per-sample path a run, a merge and `rescore` take). Best of R
repeats, per record.

    uv run python measure/salbench_tally_cost.py [--records 20000] [--repeats 5]

Run it with PYTHONPATH pointing at another checkout's src/ to compare two versions.
docs/PERFORMANCE.md records the figures."""

from __future__ import annotations

import argparse
import random
import time

from visioneval.benchmarks.salbench.benchmark import ScoringOnly
from visioneval.benchmarks.salbench.metrics import ConfigTally
from visioneval.benchmarks.salbench.options import SalBenchOptions
from visioneval.benchmarks.salbench.spec import P3_CLASSES
from visioneval.core.records import Record, Response, Sample

ANSWERS = ("Color", "size", "Orientation.", "The odd one differs in colour.", "color, size",
           "I think it is the size of the object", "None")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    bench = ScoringOnly(SalBenchOptions(configs=["P3"]))
    rng = random.Random(0)
    work = []
    for i in range(args.records):
        sample = Sample(id=f"P3/{i}", group="P3", messages=[], target=rng.choice(P3_CLASSES),
                        metadata={"config": "P3", "row": i})
        work.append((sample, rng.choice(ANSWERS)))
    best_score = best_tally = float("inf")
    for _ in range(args.repeats):
        start = time.perf_counter()
        records = []
        for sample, text in work:
            parsed, scores = bench.score(sample, text)
            records.append(Record(id=sample.id, group="P3", target=sample.target,
                                  response=Response(text=text), parsed=parsed, scores=scores,
                                  metadata=sample.metadata))
        best_score = min(best_score, time.perf_counter() - start)
        start = time.perf_counter()
        tally = ConfigTally(P3_CLASSES)
        for record in records:
            tally.add(record)
        best_tally = min(best_tally, time.perf_counter() - start)
    n = args.records
    print(f"{n} records, best of {args.repeats}: score + record {1e6 * best_score / n:.1f} "
          f"us/record, tally {1e6 * best_tally / n:.1f} us/record")


if __name__ == "__main__":
    main()
