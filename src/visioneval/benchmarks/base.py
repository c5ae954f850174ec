"""What a benchmark is: data + prompt + parser + metrics. The engine needs only this."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel
from rich.console import Console

from visioneval.records import Record, Sample, SkippedRow


class Benchmark(Protocol):
    name: str
    builtin_models: tuple[str, ...]  # the `builtin` backend's baselines that fit (none: ())
    options: BaseModel  # what run.json records; `registry.build(name, options)` rebuilds it

    def plan(self) -> dict[str, Any]:
        """The benchmark's configuration and dataset fingerprint, recorded in run.json."""

    def total(self) -> int:
        """Samples to run (rows before validation), for the progress bar."""

    def samples(self) -> Iterator[Sample | SkippedRow]:
        """Samples in a deterministic order, lazily: images are read as they are needed."""

    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        """Parse a response under every parser and score it: (parsed, scores)."""

    def summarize(self, records: list[Record]) -> dict[str, Any]:
        """metrics.json, recomputed from records alone."""

    def write_tables(self, metrics: dict[str, Any], info: dict[str, Any],
                     directory: Path) -> list[Path]:
        """Paper-style tables beside metrics.json (`info` is run.json)."""

    def print_summary(self, metrics: dict[str, Any], info: dict[str, Any],
                      console: Console) -> None:
        """The tables a user sees at the end of a run."""

    def majority_answers(self) -> dict[tuple[str, ...], str]:
        """For the builtin `majority` baseline: the most common answer per option list
        (empty when the benchmark has no such notion)."""
