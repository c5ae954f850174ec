"""A finished run of any size made from a benchmark's real samples, without a model: for
measuring and testing the report and `visioneval view` on big runs
(`measure/report_scale.py`, the large-run tests).

Samples of a small dataset are repeated (ids get `#k`) until the run has `n` records; each
answer is right, wrong, unreadable or an error in fixed shares, scored by the benchmark's
own `score`, written with the real `RunStore` and summarized by the benchmark's own
`summarize`, so the run directory is what a real run of that size writes."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from visioneval.core import registry
from visioneval.core.records import Record, Response, Sample
from visioneval.core.runfiles import BackendInfo, BenchmarkPlan, Counts, RunInfo
from visioneval.core.store import RunStore

ERROR_SHARE, UNREADABLE_SHARE, WRONG_SHARE = 0.02, 0.05, 0.3


def right_answer(sample: Sample) -> str:
    """The answer a perfect model gives: the target, or the asked task's label."""
    target = sample.target
    if isinstance(target, dict):
        return str(target.get(sample.metadata.get("task", ""), next(iter(target.values()))))
    return str(target)


def write_run(out: Path, benchmark: str, options: dict[str, Any], n: int,
              seed: int = 0) -> Path:
    bench = registry.build(benchmark, options)
    samples = [s for s in bench.samples() if isinstance(s, Sample)]
    answers = sorted({right_answer(s) for s in samples})
    plan = BenchmarkPlan.of(bench.plan(), bench.name)
    info = RunInfo(benchmark=plan.benchmark, options=plan.options, dataset=plan.dataset_info(),
                   visioneval_version="synthetic",
                   backend=BackendInfo(kind="synthetic", model="synthetic"),
                   status="finished")
    store = RunStore.create(out, info)
    rng = random.Random(seed)
    scored: dict[tuple[str, str], tuple[dict[str, Any], dict[str, dict]]] = {}
    errors = 0
    for i in range(n):
        sample = samples[i % len(samples)]
        draw = rng.random()
        if draw < ERROR_SHARE:
            errors += 1
            response = Response(error="HTTP 500: synthetic server error", attempts=6)
            parsed: dict[str, Any] = {}
            scores: dict[str, dict] = {}
        else:
            text = ("I cannot tell from this picture." if draw < ERROR_SHARE + UNREADABLE_SHARE
                    else rng.choice(answers) if draw < ERROR_SHARE + UNREADABLE_SHARE
                    + WRONG_SHARE else right_answer(sample))
            response = Response(text=text, latency_s=0.2, prompt_tokens=100,
                                completion_tokens=2)
            key = (sample.id, text)
            if key not in scored:
                scored[key] = bench.score(sample, text)
            parsed, scores = scored[key]
        copy = i // len(samples)
        store.append(Record(id=sample.id if copy == 0 else f"{sample.id}#{copy}",
                            group=sample.group, target=sample.target, response=response,
                            parsed=parsed, scores=scores, metadata=sample.metadata,
                            prompt=sample.prompt_summary()))
    store.close()
    store.write_metrics(bench.summarize(store.iter_latest()),
                        registry.definition(benchmark).metrics_model)
    info.counts = Counts(records=n, scored=n - errors, errors=errors, skipped_rows=0,
                         cache_hits=0, requests_sent=n)
    store.save_info()
    return out
