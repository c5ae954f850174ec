"""A benchmark of its own with nothing to look at: N multiple-choice items whose right answer
is always option A, for the loopback server's `--answer varying:A,B` model, which answers an
item right with a chance of its own drawn from Beta(A, B) and draws anew per request seed.
With `--epochs K` the run's variance split can be checked against the values the Beta says
(docs/epochs.md; `measure/epochs_recovery.py`).

    uv run visioneval loopback --answer varying:2,1 --port 8899 &
    uv run visioneval run examples/epochs/known_items.py:KnownItemsDefinition -o items=200 \\
        --epochs 4 --backend openai --model m --base-url http://127.0.0.1:8899/v1
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, Field

from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.records import Sample, SkippedRow, user

OPTIONS = ("A", "B", "C", "D")


class Options(BaseModel):
    items: int = Field(200, ge=2, description="How many items.")
    images_per: int = Field(1, ge=1, description="Items that share an image's cluster (1: "
                            "each item alone; k: items 0..k-1 one cluster, and so on).")


class KnownItems(Benchmark[Options]):
    name = "known-items"

    def samples(self) -> Iterator[Sample | SkippedRow]:
        for i in range(self.options.items):
            text = (f"Item {i}. Which option is right?\n"
                    + "\n".join(f"{letter}. option {letter.lower()}" for letter in OPTIONS)
                    + "\nAnswer with the option's letter.")
            cluster = f"cluster{i // self.options.images_per}"
            yield Sample(f"item{i:05d}", "items", (user(text),), "A", {"cluster": cluster})

    def total(self) -> int:
        return self.options.items

    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        said = text.strip().upper()[:1]
        return {"answer": said}, {"accuracy": {"correct": float(said == sample.target)}}


class KnownItemsDefinition(BenchmarkDefinition):
    summary = "Multiple-choice items whose right answer is A, for a model of known variation."
    benchmark = KnownItems

    def paired_rows(self, record: Any) -> dict[str, Any]:
        from visioneval.stats.paired import PairedRow

        correct = record.scores.get("accuracy", {}).get("correct")
        if correct is None:
            return {}
        return {"accuracy": PairedRow("correct", (float(correct),),
                                      str(record.metadata.get("cluster")))}

