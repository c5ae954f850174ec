"""MMVP as a benchmark: each question -> one request per protocol's prompt, each answer scored
under every protocol that reads that prompt, against each label set; metrics per protocol
side by side (metrics.py), and why they differ (harness.differences)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from visioneval.benchmarks.mmvp import prompts, scoring, tables
from visioneval.benchmarks.mmvp.data import MmvpData, Row, locate
from visioneval.benchmarks.mmvp.judging import Judged
from visioneval.benchmarks.mmvp.labels import Labels, labels
from visioneval.benchmarks.mmvp.metrics import pair_units, summarize, write_protocols_csv
from visioneval.benchmarks.mmvp.options import MmvpOptions
from visioneval.benchmarks.mmvp.patterns import pattern
from visioneval.benchmarks.mmvp.questions import Question, checked
from visioneval.benchmarks.mmvp.questions import Skip as BadQuestion
from visioneval.benchmarks.mmvp.spec import GROUP, REFERENCE
from visioneval.core.backend_spec import BackendSpec
from visioneval.core.benchmark import Benchmark
from visioneval.core.gap import GapUnit
from visioneval.core.records import Record, Sample, SkippedRow, user
from visioneval.core.rowcounts import read_counts
from visioneval.core.rows import Skip
from visioneval.core.runfiles import RunInfo
from visioneval.core.store import RunStore
from visioneval.core.variant_ids import family_of

if TYPE_CHECKING:
    from visioneval.core.rowcounts import PublishedRows
    from visioneval.core.solver import Solver

__all__ = ["Mmvp", "MmvpOptions", "build", "scoring_only"]


def question_of(sample_or_record: Sample | Record) -> Question:
    meta = sample_or_record.metadata
    return Question(int(meta["index"]), str(meta["question"]), str(meta["options"]),
                    str(meta["answer"]))


def labels_of(target: Mapping[str, Any]) -> Labels:
    return Labels(str(target["published"]), str(target["lmms_eval"]), str(target["corrected"]))


class Mmvp(Benchmark[MmvpOptions]):
    name = "mmvp"
    builtin_models = ("random",)

    def __init__(self, options: MmvpOptions, data: MmvpData | None = None):
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
        """With a judge: the answer, then the paper's grader or VLMEvalKit's fallback."""
        if self.judge is None:
            return None
        return Judged(self.score, question_of, lambda s: labels_of(s.target),
                      tuple(self.options.protocols),
                      "corrected" in self.options.label_sets).solve

    @cached_property
    def data_source(self) -> MmvpData:
        return locate(None)

    @property
    def per_row(self) -> int:
        """Requests per question: one per protocol's prompt."""
        return len(self.options.protocols)

    @property
    def limit(self) -> int | None:
        n = self.options.pairs
        return None if n is None else 2 * n

    def published_rows(self) -> PublishedRows | None:
        """MMVP/MMVP's 300 questions (`rows.json`), without --data-dir, with the mean length
        of the prompts the run sends (recorded there per protocol)."""
        if self.options.data_dir is not None:
            return None
        path = Path(__file__).with_name("rows.json")
        counts = read_counts(path, [GROUP], self.limit, requests_per_row=self.per_row)
        chars = json.loads(path.read_text())["prompt_chars_by_protocol"]
        mean = sum(chars[p] for p in self.options.protocols) / len(self.options.protocols)
        return replace(counts, prompt_chars=round(mean), chars_source=counts.chars_source)

    def dataset(self) -> dict[str, Any]:
        return self.data_source.dataset()

    def total(self) -> int:
        rows = self.data_source.count()
        return (rows if self.limit is None else min(rows, self.limit)) * self.per_row

    # -- samples -----------------------------------------------------------------------------
    def samples(self) -> Iterator[Sample | SkippedRow]:
        seen: set[int] = set()
        for row in self.data_source.rows(self.limit):
            try:
                yield from self._row_samples(row, seen)
            except (Skip, BadQuestion) as exc:
                yield SkippedRow(GROUP, row.where, str(exc), self.per_row)

    def _row_samples(self, row: Row, seen: set[int]) -> list[Sample]:
        v = row.values
        q = checked(v.get("Index"), v.get("Question"), v.get("Options"), v.get("Correct Answer"))
        if q.index in seen:
            raise BadQuestion(f"Index {q.index} appears twice")
        seen.add(q.index)
        image = row.image()
        found, notes = labels(q, self.data_source.layout)
        target = {"published": found.published, "lmms_eval": found.lmms_eval,
                  "corrected": found.corrected}
        meta: dict[str, Any] = {
            "item": str(q.index), "index": q.index, "pair": q.pair, "question": q.question,
            "options": q.options, "answer": q.answer, "pattern": pattern(q.index)}
        if notes:
            meta["label_notes"] = notes
        return [Sample(id=f"{q.index}/{p}", group=GROUP,
                       messages=(user(image, prompts.prompt(p, q)),), target=target,
                       metadata=meta | {"prompt": p})
                for p in self.options.protocols]

    # -- scoring -------------------------------------------------------------------------------
    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        return scoring.score(sample.metadata["prompt"], text, question_of(sample),
                             labels_of(sample.target), self.options.protocols)

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        o = self.options
        return summarize(records, o.protocols, o.label_sets, o.judge_model)

    def gap_units(self, records: Iterable[Record]) -> Iterator[GapUnit]:
        """Each pair's part of pair accuracy (`visioneval explain`'s paired intervals)."""
        o = self.options
        return pair_units(records, o.protocols, o.label_sets)

    def headline_outcome(self, record: Record) -> float | None:
        """The paper protocol's verdict on an answer to the paper's prompt (published
        labels): the per-question outcome its pair accuracy is made of."""
        protocol = self.options.protocols[0]
        if not record.ok or record.metadata.get("prompt") != protocol:
            return None
        return float(record.scores.get(protocol, {}).get("correct", 0.0))

    def headline_proportion(self) -> str | None:
        return f"per-question accuracy ({self.options.protocols[0]})"

    # -- output ---------------------------------------------------------------------------------
    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        written = [tables.write_csv(metrics, directory)]
        protocols = self.options.protocols
        if REFERENCE in protocols and len(protocols) > 1:
            records = (r for r in RunStore(directory, info).iter_latest()
                       if family_of(r) is None)
            written.append(write_protocols_csv(records, protocols, directory))
        return written


def build(options: Mapping[str, Any] | BaseModel) -> Mmvp:
    """The benchmark from its options (as run.json records them); finds the data."""
    options = MmvpOptions.model_validate(options)
    if options.data_dir is None:
        return Mmvp(options)
    return Mmvp(options, locate(options.data_dir))


def scoring_only(options: BaseModel) -> Mmvp:
    """MMVP without data: scores and summarizes records, reads no row."""
    return Mmvp(MmvpOptions.model_validate(options),
                MmvpData("MMVP/MMVP", Path(), [], "no data"))

