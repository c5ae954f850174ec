"""What checking a benchmark's summary against its metrics model costs in `finish` (once per
session end, before metrics.json is written): the summary of N samples as the benchmark
makes it, checked by `runfiles.check_metrics`, against writing the file.

    uv run python measure/metrics_check_cost.py
"""

from __future__ import annotations

import random
import time

import orjson

from visioneval.benchmarks.salbench.metrics import ConfigTally, SalBenchMetrics
from visioneval.benchmarks.salbench.spec import CONFIGS
from visioneval.core.records import Record, Response
from visioneval.core.runfiles import check_metrics
from visioneval.evaluators.evaluate import summarize as evaluate_summary
from visioneval.evaluators.metrics import EvaluateMetrics
from visioneval.metrics.labelsets import sample_scores
from visioneval.validators.result import EvalResult


def _best(work, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def salbench(n: int) -> tuple[float, float]:
    classes = CONFIGS["P3"].classes
    rng = random.Random(0)
    tally = ConfigTally(classes)
    for i in range(n):
        pred, gold = [rng.choice(classes)], [rng.choice(classes)]
        tally.add(Record.model_construct(
            id=f"P3/{i}", group="P3", target=",".join(gold), response=Response(text="x"),
            parsed={"strict": pred, "lenient": pred}, metadata={"config": "P3"},
            scores={p: sample_scores(set(pred), set(gold)) for p in ("strict", "lenient")}))
    metrics = {"P3": tally.result("P3")}
    return (_best(lambda: check_metrics(metrics, SalBenchMetrics)),
            _best(lambda: orjson.dumps(metrics, option=orjson.OPT_INDENT_2)))


def evaluate(n: int) -> tuple[float, float]:
    rng = random.Random(0)
    records = []
    for i in range(n):
        score = rng.random()
        result = EvalResult.processed(score, 0.5).model_dump()
        records.append(Record.model_construct(
            id=f"case{i}/judge", group="judge:accuracy", target={}, response=Response(),
            parsed={"result": result}, metadata={"case": f"case{i}"}, scores={}))
    metrics = evaluate_summary(records)
    return (_best(lambda: check_metrics(metrics, EvaluateMetrics)),
            _best(lambda: orjson.dumps(metrics, option=orjson.OPT_INDENT_2)))


def main() -> None:
    for name, measure, sizes in (("salbench P3", salbench, (10_000, 100_000)),
                                 ("evaluate, one case per sample", evaluate,
                                  (1_000, 10_000, 100_000))):
        for n in sizes:
            check, dump = measure(n)
            print(f"{name:31s} {n:>7,} samples: check {1e3 * check:8.2f} ms, "
                  f"write's JSON {1e3 * dump:7.2f} ms")


if __name__ == "__main__":
    main()
