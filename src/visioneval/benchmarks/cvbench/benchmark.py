"""CV-Bench as a benchmark: each item -> one request per protocol's prompt (the three
prompts differ), each answer scored under the protocol that sent it and every label set
asked; the paper's answer also read by the harnesses' extraction (why the protocols
differ)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from visioneval.benchmarks.cvbench import metrics, protocols, tables
from visioneval.benchmarks.cvbench.data import locate
from visioneval.benchmarks.cvbench.judging import Judged
from visioneval.benchmarks.cvbench.options import CvBenchOptions
from visioneval.benchmarks.cvbench.spec import (
    COLUMNS,
    HF_REPO,
    OPTIONAL,
    PAPER,
    SOURCES,
    SPLIT,
    TASKS,
    TYPES,
    VLMEVALKIT,
    score_key,
)
from visioneval.core.backend_spec import BackendSpec
from visioneval.core.benchmark import Benchmark
from visioneval.core.gap import GapUnit
from visioneval.core.records import Record, Sample, user
from visioneval.core.rowcounts import read_counts
from visioneval.core.rows import DataRow, ParquetRows, Skip
from visioneval.core.runfiles import RunInfo
from visioneval.core.store import RunStore
from visioneval.core.variant_ids import family_of
from visioneval.harness.corrections import Corrections
from visioneval.harness.differences import Counterfactual, reference_block, write_run_csv

if TYPE_CHECKING:
    from visioneval.core.records import SkippedRow
    from visioneval.core.rowcounts import PublishedRows
    from visioneval.core.solver import Solver

__all__ = ["CvBench", "CvBenchOptions", "build", "scoring_only"]

CORRECTIONS = Path(__file__).with_name("corrections.json")
# A typical request's text: the dataset prompt (question and lettered options, about 150
# characters) and the protocol's own instruction (0 to 100 characters).
PROMPT_CHARS = 200


def choices_of(value: Any) -> list[str]:
    """The `choices` cell as a list of option texts; Skip naming the field otherwise."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not 2 <= len(value) <= 26 or \
            not all(isinstance(c, (str, int, float)) for c in value):
        raise Skip(f"field 'choices' is {value!r}, not a list of 2 to 26 options")
    return [str(c) for c in value]


def image_key(row: DataRow, data: bytes) -> str:
    """What items share an image by: its `filename`, else a digest of its bytes."""
    name = row["filename"]
    if isinstance(name, str) and name:
        return name
    return hashlib.sha1(data).hexdigest()[:16]


class CvBench(Benchmark[CvBenchOptions]):
    name = "cvbench"
    builtin_models = ("random",)  # one of the item's options, uniformly

    def __init__(self, options: CvBenchOptions, root: Path | None = None,
                 files: list[Path] | None = None):
        """`root` and `files`: the local copy (--data-dir), or None for the Hub's, found or
        downloaded only when a row is first read (a dry run counts the published rows)."""
        super().__init__(options)
        if root is not None and files is not None:
            self.root, self.files = root, files

    @property
    def judge(self) -> BackendSpec | None:
        """VLMEvalKit's judge (`--judge-model`; None: every answer read by rule)."""
        o = self.options
        if o.judge_backend is None or o.judge_model is None or VLMEVALKIT not in o.protocols:
            return None
        return BackendSpec(kind=o.judge_backend, model=o.judge_model,
                           base_url=o.judge_base_url, api_key_env=o.judge_api_key_env)

    @property
    def solve(self) -> Solver | None:
        """With a judge: the answer, then the judge on what VLMEvalKit's rules leave."""
        if self.judge is None:
            return None
        return Judged(self.score, tuple(self.options.label_sets)).solve

    @property
    def one_request_each(self) -> bool:
        """The judge is asked for some answers only: a dry run still prices the items."""
        return True

    @cached_property
    def _located(self) -> tuple[Path, list[Path]]:
        return locate(None)

    @cached_property
    def root(self) -> Path:
        return self._located[0]

    @cached_property
    def files(self) -> list[Path]:
        return self._located[1]

    @cached_property
    def corrections(self) -> Corrections:
        return Corrections.load(CORRECTIONS)

    @property
    def per_row(self) -> int:
        """Requests per item: one per protocol (no two send the same prompt)."""
        return len(self.options.protocols)

    def published_rows(self) -> PublishedRows | None:
        """The Hub's 2,638 items (`rows.json`), without --data-dir."""
        if self.options.data_dir is not None:
            return None
        counts = read_counts(Path(__file__).with_name("rows.json"), [SPLIT],
                             self.options.num_samples, requests_per_row=self.per_row)
        return replace(counts, prompt_chars=PROMPT_CHARS,
                       chars_source="estimate: a question with its lettered options and "
                                    "the protocol's instruction")

    def data(self) -> ParquetRows:
        source = str(self.options.data_dir) if self.options.data_dir else \
            f"hf://{HF_REPO}"
        return ParquetRows(self.root, {SPLIT: self.files}, COLUMNS, OPTIONAL,
                           limit=self.options.num_samples, source=source)

    # -- samples -----------------------------------------------------------------------------
    def samples(self) -> Iterator[Sample | SkippedRow]:
        yield from self.data().group_samples(SPLIT, self._row_samples, per_row=self.per_row,
                                             where=_where)

    def _row_samples(self, row: DataRow) -> list[Sample]:
        """An item's requests, one per protocol; Skip names the field that is wrong."""
        idx = row["idx"]
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise Skip(f"field 'idx' is {idx!r}, not a whole number")
        source, task = row["source"], row["task"]
        if source not in SOURCES:
            raise Skip(f"field 'source' is {source!r}, not one of {', '.join(SOURCES)}")
        if task not in TASKS:
            raise Skip(f"field 'task' is {task!r}, not one of {', '.join(TASKS)}")
        choices = choices_of(row["choices"])
        text = row.text("prompt")
        answer = row["answer"]
        if not isinstance(answer, str):
            raise Skip(f"field 'answer' is {answer!r}, not text")
        try:
            gold = protocols.gold_letter(answer, choices)
            fixed = self.corrections.corrected(str(idx), "answer", answer)
            corrected = protocols.gold_letter(fixed, choices)
        except ValueError as exc:
            raise Skip(f"field {exc}") from None
        image = row.image()
        meta: dict[str, Any] = {
            "item": str(idx), "idx": idx, "source": source, "task": task,
            "type": TYPES[source], "image_key": image_key(row, image.data),
            "choices": choices, "question": row["question"] or text}
        target = {"original": gold, "corrected": corrected}
        return [Sample(id=f"{idx}/{p}", group=source,
                       messages=(user(image, protocols.prompt(p, text, choices)),),
                       target=target, metadata=meta | {"protocol": p})
                for p in self.options.protocols]

    # -- scoring -------------------------------------------------------------------------------
    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        """The sending protocol's reading under every label set; the paper's answer also
        read by the harnesses' extraction (the counterfactuals of why they differ)."""
        meta = sample.metadata
        protocol, source, choices = meta["protocol"], meta["source"], meta["choices"]
        others = [p for p in self.options.protocols if p != PAPER]
        parsed: dict[str, Any] = {}
        scores: dict[str, dict] = {}
        for label_set in self.options.label_sets:
            gold = str(sample.target[label_set])
            key = score_key(protocol, label_set)
            reading = protocols.read(protocol, text, source, choices, gold)
            parsed[key] = reading.shown
            if protocol != PAPER:
                scores[key] = {"correct": float(reading.correct)}
                continue
            scores[key] = reference_block(float(reading.correct), {
                score_key(p, label_set): Counterfactual(
                    None, float(protocols.read(p, text, source, choices, gold).correct))
                for p in others})
        return parsed, scores

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        return metrics.summarize(records, self.options, self.corrections)

    def gap_units(self, records: Iterable[Record]) -> Iterator[GapUnit]:
        """Each answer's part of its protocol's headline (`visioneval explain`'s paired
        intervals)."""
        return metrics.item_units(records, self.options.protocols, self.options.label_sets)

    def headline_outcome(self, record: Record) -> float | None:
        """An answer's verdict under the first protocol asked (the paper's in `all`), on
        its first label set: the per-item accuracy --target-ci watches (the combined
        score weighs sources, which a per-answer stopping rule does not see)."""
        protocol = self.options.protocols[0]
        if not record.ok or family_of(record) is not None or \
                record.metadata.get("protocol") != protocol:
            return None
        score = record.scores.get(score_key(protocol, self.options.label_sets[0]))
        return None if score is None else float(score["correct"])

    def headline_proportion(self) -> str | None:
        return f"per-item accuracy ({self.options.protocols[0]})"

    # -- output ---------------------------------------------------------------------------------
    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        written = tables.write(metrics, directory)
        label_set = self.options.label_sets[0]
        keys = [score_key(p, label_set) for p in self.options.protocols]
        if score_key(PAPER, label_set) in keys and len(keys) > 1:
            stored = (r for r in RunStore(directory, info).iter_latest()
                      if family_of(r) is None)
            written.append(write_run_csv(stored, keys[0], keys, directory / "protocols.csv"))
        return written


def _where(row: DataRow) -> str:
    idx = row["idx"]
    return f"#{row.index}" + (f" (idx {idx})" if idx is not None else "")


def build(options: Mapping[str, Any] | BaseModel) -> CvBench:
    """The benchmark from its options (as run.json records them); finds the data."""
    options = CvBenchOptions.model_validate(options)
    if options.data_dir is None:
        return CvBench(options)
    root, files = locate(options.data_dir)
    return CvBench(options, root, files)


def scoring_only(options: BaseModel) -> CvBench:
    """CV-Bench without data: scores and summarizes records, reads no row."""
    return CvBench(CvBenchOptions.model_validate(options), Path(), [])
