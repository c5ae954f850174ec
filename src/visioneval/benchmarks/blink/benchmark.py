"""BLINK as a benchmark: each question -> one request per protocol's prompt (every image of
the question with it), each answer scored under every protocol that reads that prompt and
against each label set; metrics per protocol side by side (metrics.py), and why they differ
(harness.differences)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from visioneval.benchmarks.blink import prompts, scoring, tables
from visioneval.benchmarks.blink.data import BlinkData, Row, locate
from visioneval.benchmarks.blink.judging import Judged
from visioneval.benchmarks.blink.labels import corrected
from visioneval.benchmarks.blink.metrics import (
    question_units,
    summarize,
    write_protocols_csv,
)
from visioneval.benchmarks.blink.options import BlinkOptions
from visioneval.benchmarks.blink.questions import Question, checked
from visioneval.benchmarks.blink.spec import REFERENCE
from visioneval.core.backend_spec import BackendSpec
from visioneval.core.benchmark import Benchmark
from visioneval.core.gap import GapUnit
from visioneval.core.records import Record, Sample, SkippedRow, user
from visioneval.core.rowcounts import read_counts
from visioneval.core.rows import Skip
from visioneval.core.runfiles import RunInfo
from visioneval.core.store import RunStore
from visioneval.core.variant_ids import family_of
from visioneval.io.images import Image

if TYPE_CHECKING:
    from visioneval.core.rowcounts import PublishedRows
    from visioneval.core.solver import Solver

__all__ = ["Blink", "BlinkOptions", "build", "scoring_only"]


def question_of(sample_or_record: Sample | Record) -> Question:
    meta = sample_or_record.metadata
    return Question(str(meta["item"]), str(meta["task"]), str(meta["question"]),
                    tuple(meta["choices"]), str(meta["answer"]), "")


class Blink(Benchmark[BlinkOptions]):
    name = "blink"
    builtin_models = ("random",)

    def __init__(self, options: BlinkOptions, data: BlinkData | None = None):
        """`data`: the local copy (--data-dir), or None for the Hub's, found or downloaded
        only when a row is first read (a dry run counts the published rows)."""
        super().__init__(options)
        if data is not None:
            self.data_source = data

    @property
    def judge(self) -> BackendSpec | None:
        """The model `--judge-model` names (None: every answer read by rule)."""
        o = self.options
        if o.judge_backend is None or o.judge_model is None:
            return None
        return BackendSpec(kind=o.judge_backend, model=o.judge_model,
                           base_url=o.judge_base_url, api_key_env=o.judge_api_key_env)

    @property
    def solve(self) -> Solver | None:
        """With a judge: the answer, then the judge on what the paper's or VLMEvalKit's
        rules leave unread."""
        return None if self.judge is None else Judged(self.score, question_of).solve

    @property
    def one_request_each(self) -> bool:
        """The judge is asked for some answers only: a dry run still prices the questions."""
        return True

    @cached_property
    def data_source(self) -> BlinkData:
        return locate(None, self.options.task_list)

    @property
    def per_row(self) -> int:
        return len(self.options.protocols)

    def published_rows(self) -> PublishedRows | None:
        """The val questions per task (`rows.json`), without --data-dir."""
        if self.options.data_dir is not None:
            return None
        return read_counts(Path(__file__).with_name("rows.json"), self.options.task_list,
                           self.options.limit, requests_per_row=self.per_row,
                           images_per_request=2)

    def dataset(self) -> dict[str, Any]:
        return self.data_source.dataset()

    def total(self) -> int:
        limit = self.options.limit
        counts = self.data_source.counts().values()
        return sum(c if limit is None else min(c, limit) for c in counts) * self.per_row

    def samples(self) -> Iterator[Sample | SkippedRow]:
        seen: set[str] = set()
        for row in self.data_source.rows(self.options.limit):
            try:
                yield from self._row_samples(row, seen)
            except Skip as exc:
                yield SkippedRow(row.task, row.where, str(exc), self.per_row)

    def _row_samples(self, row: Row, seen: set[str]) -> list[Sample]:
        q = checked(row.task, row.values)
        if q.idx in seen:
            raise Skip(f"{q.idx} appears twice")
        seen.add(q.idx)
        images = row.images()
        if not images:
            raise Skip(f"{q.idx}: no image in image_1 ... image_4")
        meta: dict[str, Any] = {
            "item": q.idx, "task": q.task, "question": q.question, "choices": list(q.choices),
            "answer": q.answer, "letters": q.letters, "images": len(images),
            "image": images[0].sha256[:16], "corrected": corrected(q.idx, q.answer)}
        out = []
        for p in self.options.protocols:
            text = prompts.prompt(p, q)
            parts: list[str | Image] = [text, *images] if p in prompts.TEXT_FIRST \
                else [*images, text]
            out.append(Sample(id=f"{q.idx}/{p}", group=q.task, messages=(user(*parts),),
                              target=q.answer, metadata=meta | {"prompt": p}))
        return out

    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        return scoring.score(sample.metadata["prompt"], text, question_of(sample),
                             str(sample.metadata["corrected"]), self.options.protocols)

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        o = self.options
        return summarize(records, o.protocols, o.label_sets, o.judge_model)

    def gap_units(self, records: Iterable[Record]) -> Iterator[GapUnit]:
        """Each answer's part of the mean over tasks or over questions, drawn by image
        (`visioneval explain`'s paired intervals)."""
        return question_units(records, self.options.protocols, self.options.label_sets)

    def headline_outcome(self, record: Record) -> float | None:
        """The first protocol's verdict on an answer to its own prompt (published labels)."""
        protocol = self.options.protocols[0]
        if not record.ok or record.metadata.get("prompt") != protocol:
            return None
        return float(record.scores.get(protocol, {}).get("correct", 0.0))

    def headline_proportion(self) -> str | None:
        return f"per-question accuracy ({self.options.protocols[0]})"

    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        written = [tables.write_csv(metrics, directory)]
        protocols = self.options.protocols
        if REFERENCE in protocols and len(protocols) > 1:
            records = (r for r in RunStore(directory, info).iter_latest()
                       if family_of(r) is None)
            written.append(write_protocols_csv(records, protocols, directory))
        return written


def build(options: Mapping[str, Any] | BaseModel) -> Blink:
    """The benchmark from its options (as run.json records them); finds the data."""
    options = BlinkOptions.model_validate(options)
    if options.data_dir is None:
        return Blink(options)
    return Blink(options, locate(options.data_dir, options.task_list))


def scoring_only(options: BaseModel) -> Blink:
    """BLINK without data: scores and summarizes records, reads no row."""
    return Blink(BlinkOptions.model_validate(options), BlinkData(Path(), {}, "no data"))
