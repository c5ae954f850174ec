"""BlindTest as a benchmark: each row -> one request per protocol (the paper's prompt as the
Hub stores it, lmms-eval's prompt and suffix, VLMEvalKit's "Question: " prompt), scored
against the Hub's groundtruth; metrics per protocol side by side, per task and per the
task's own parameters (line width, distance, count, ...)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from visioneval.benchmarks.blindtest import magnitude, metrics, scoring, tables
from visioneval.benchmarks.blindtest.data import Located, first_rows_per_task, locate
from visioneval.benchmarks.blindtest.labels import corrected
from visioneval.benchmarks.blindtest.options import BlindTestOptions
from visioneval.benchmarks.blindtest.spec import (
    COLUMNS,
    LMMS,
    LMMS_SUFFIX,
    OPTIONAL_COLUMNS,
    PAPER,
    SPLIT,
    TASKS,
    VLMEVALKIT,
    VLMEVALKIT_PREFIX,
)
from visioneval.core.benchmark import Benchmark
from visioneval.core.gap import GapUnit
from visioneval.core.records import Record, Sample, SkippedRow, user
from visioneval.core.rowcounts import PublishedRows, read_counts
from visioneval.core.rows import DataRow, ParquetRows, Skip
from visioneval.core.runfiles import RunInfo

__all__ = ["BlindTest", "BlindTestOptions", "build", "prompt", "scoring_only"]


def prompt(family: str, text: str) -> str:
    """The text a protocol sends: the Hub's prompt as it is ([P] src/prompts.md), lmms-eval's
    prompt and post_prompt ([L] utils.py lines 29-39, vlmsareblind.yaml line 29), or
    VLMEvalKit's generic question ([V] image_mcq.py line 235)."""
    if family == LMMS:
        return text + LMMS_SUFFIX
    if family == VLMEVALKIT:
        return f"{VLMEVALKIT_PREFIX}{text}\n"
    return text


def metadata_object(raw: Any) -> dict[str, Any]:
    """The row's metadata (a JSON object in the Hub's text column); {} when absent."""
    if not isinstance(raw, str) or not raw.strip():
        return {}
    try:
        found = json.loads(raw)
    except ValueError:
        raise Skip(f"column 'metadata' is not JSON: {raw[:60]!r}") from None
    return {str(k): v for k, v in found.items()} if isinstance(found, dict) else {}


def parameters(found: dict[str, Any]) -> dict[str, Any]:
    """The metadata's scalar values: the task's own parameters (line thickness, distance,
    count, ...)."""
    return {k: v for k, v in found.items()
            if isinstance(v, (str, int, float, bool)) or v is None}


class BlindTest(Benchmark[BlindTestOptions]):
    name = "blindtest"
    builtin_models = ("random",)

    def __init__(self, options: BlindTestOptions, located: Located | None = None):
        super().__init__(options)
        if located is not None:
            self.located = located

    @cached_property
    def located(self) -> Located:
        return locate(None)

    @property
    def per_row(self) -> int:
        return len(self.options.families)

    def published_rows(self) -> PublishedRows | None:
        """The Hub's rows (`rows.json`) without --data-dir: a dry run downloads nothing."""
        if self.options.data_dir is not None:
            return None
        parts = list(TASKS)
        return read_counts(Path(__file__).with_name("rows.json"), parts,
                           self.options.num_samples, requests_per_row=self.per_row)

    def data(self) -> ParquetRows:
        located = self.located
        return ParquetRows(located.root, {SPLIT: located.files}, COLUMNS, OPTIONAL_COLUMNS,
                           source=located.source)

    @cached_property
    def _wanted(self) -> set[int] | None:
        limit = self.options.num_samples
        return None if limit is None else first_rows_per_task(self.located.files, limit)

    def total(self) -> int:
        wanted = self._wanted
        rows = len(wanted) if wanted is not None else self.data().count()
        return rows * self.per_row

    def samples(self) -> Iterator[Sample | SkippedRow]:
        rows = self._rows
        assert rows is not None
        yield from rows.group_samples(SPLIT, self._row_samples, per_row=self.per_row,
                                      wanted=self._wanted)

    def _row_samples(self, row: DataRow) -> list[Sample]:
        task = row.text("task").strip()
        if task not in TASKS:
            raise Skip(f"column 'task' is {task!r}, not a BlindTest task")
        text = row.text("prompt")
        if not text.strip():
            raise Skip("column 'prompt' is empty")
        label = row.text("groundtruth").strip()
        if not label:
            raise Skip("column 'groundtruth' is empty")
        found = metadata_object(row["metadata"])
        params = parameters(found)
        image = row.image()
        item = f"{SPLIT}/{row.index}"
        target = {"groundtruth": label, "corrected": corrected(item, label)}
        meta: dict[str, Any] = {"item": item, "task": task, "row": row.index,
                                "prompt": text, "parameters": params}
        level = magnitude.level(task, found)
        if level is not None:
            meta["level"] = level  # the task's magnitude (magnitude.py), for its threshold
        return [Sample(id=f"{item}/{family}", group=task,
                       messages=(user(image, prompt(family, text)),), target=target,
                       metadata=meta | {"family": family})
                for family in self.options.families]

    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        meta = sample.metadata
        return scoring.score(meta["family"], meta["task"], text, sample.target["groundtruth"])

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        o = self.options
        return metrics.summarize(records, o.protocols, o.label_sets)

    def gap_units(self, records: Iterable[Record]) -> Iterator[GapUnit]:
        """Each answer's part of the paper's task mean and lmms-eval's accuracy
        (`visioneval explain`'s paired intervals)."""
        return metrics.item_units(records, self.options.protocols, self.options.label_sets)

    def headline_outcome(self, record: Record) -> float | None:
        """The paper's reading right or wrong: `--target-ci` watches its per-row accuracy."""
        if not record.ok or record.metadata.get("family") != PAPER:
            return None
        return float(record.scores.get(PAPER, {}).get("correct", 0.0))

    def headline_proportion(self) -> str | None:
        return "accuracy (the paper's reading, every task's rows)" \
            if PAPER in self.options.protocols else None

    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        return tables.write(metrics, self.options, directory)


def build(options: Mapping[str, Any] | BaseModel) -> BlindTest:
    options = BlindTestOptions.model_validate(options)
    if options.data_dir is None:
        return BlindTest(options)
    return BlindTest(options, locate(options.data_dir))


def scoring_only(options: BaseModel) -> BlindTest:
    """BlindTest without data: scores and summarizes records, reads no row."""
    options = BlindTestOptions.model_validate(options)
    return BlindTest(options, Located(Path(), [], ""))
