"""What `--prompt both` adds to SalBench's `finish`: one config's records under both prompts
(`ConfigTally` with two families: the second family's tally, the per-row pairs and the
prompt-effect tests), against the same records under one prompt; time and peak memory.

    uv run python measure/prompt_both_cost.py
"""

from __future__ import annotations

import random
import time
import tracemalloc

from visioneval.benchmarks.salbench.metrics import ConfigTally
from visioneval.benchmarks.salbench.spec import CONFIGS
from visioneval.core.records import Record, Response
from visioneval.metrics.labelsets import sample_scores


def records(n: int, config: str, families: tuple[str, ...]) -> list[Record]:
    classes = CONFIGS[config].classes
    rng = random.Random(0)
    out = []
    for row in range(n):
        gold = rng.choice(classes)
        for family in families:
            pred = {rng.choice(classes)}
            suffix = "" if family == families[0] else f"@{family}"
            scores = sample_scores(pred, {gold})
            out.append(Record(
                id=f"{config}/img{row}{suffix}", group=config, target=gold.capitalize(),
                response=Response(text=", ".join(pred)),
                parsed={"strict": sorted(pred), "lenient": sorted(pred)},
                scores={"strict": scores, "lenient": scores},
                metadata={"config": config, "row": row, "prompt": family}))
    return out


def _summarize(given: list[Record], config: str, families: tuple[str, ...]) -> None:
    tally = ConfigTally(CONFIGS[config].classes, families)
    for record in given:
        tally.add(record)
    tally.result(config)


def finish(n: int, config: str, families: tuple[str, ...]) -> tuple[float, float]:
    """Seconds (untraced) and peak MB (a second, traced pass) of summarizing the records."""
    given = records(n, config, families)
    started = time.perf_counter()
    _summarize(given, config, families)
    seconds = time.perf_counter() - started
    tracemalloc.start()
    _summarize(given, config, families)
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return seconds, peak


def main() -> None:
    import scipy.stats  # noqa: F401  (imported once by any run's finish; not measured here)

    print("| config | rows | one prompt s | both prompts s | one prompt peak MB | both MB |")
    print("|---|---:|---:|---:|---:|---:|")
    for config in ("P3", "O3"):
        for n in (2589, 16000):
            one, one_mb = finish(n, config, ("paper",))
            both, both_mb = finish(n, config, ("paper", "lmms-eval"))
            print(f"| {config} | {n:,} | {one:.2f} | {both:.2f} | {one_mb:.1f} | {both_mb:.1f} |")


if __name__ == "__main__":
    main()
