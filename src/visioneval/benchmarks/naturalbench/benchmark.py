"""NaturalBench as a benchmark: each group (two questions, two images) -> four items, each
asked once per distinct prompt (the paper's, and the one lmms-eval and VLMEvalKit share),
scored under every protocol that sends that prompt and every label set asked."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from visioneval.benchmarks.naturalbench import metrics, protocols, tables
from visioneval.benchmarks.naturalbench.data import locate
from visioneval.benchmarks.naturalbench.options import NaturalBenchOptions
from visioneval.benchmarks.naturalbench.spec import (
    COLUMNS,
    FAMILY,
    FIXED_LAYOUT,
    HARNESSES,
    HF_REPO,
    ITEMS,
    LABELS,
    OPTIONAL,
    PAPER,
    QUESTION_TYPES,
    TYPE_COLUMNS,
    score_key,
)
from visioneval.benchmarks.naturalbench.variants import controls
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

__all__ = ["NaturalBench", "NaturalBenchOptions", "build", "scoring_only", "score_key"]

SPLIT = "train"
CORRECTIONS = Path(__file__).with_name("corrections.json")
# A typical request's text: a question of ~70 characters (the authors' fine-tuning copy of
# the groups averages 69 for yes-no questions) and its suffix of 24 or 61.
PROMPT_CHARS = 100


def question_type(row: DataRow) -> str:
    """The row's question type, from `Question_Type` or `Question Type`; Skip when absent
    or unknown."""
    for column in TYPE_COLUMNS:
        value = row[column]
        if value is not None:
            if value not in QUESTION_TYPES:
                raise Skip(f"column {column!r} is {value!r}, not one of "
                           f"{', '.join(QUESTION_TYPES)}")
            return str(value)
    raise Skip(f"no question type (column {TYPE_COLUMNS[0]!r} or {TYPE_COLUMNS[1]!r})")


class NaturalBench(Benchmark[NaturalBenchOptions]):
    name = "naturalbench"
    builtin_models = ("random",)  # a uniform guess between the two answers

    def __init__(self, options: NaturalBenchOptions, root: Path | None = None,
                 files: list[Path] | None = None):
        """`root` and `files`: the local copy (--data-dir), or None for the Hub's, found or
        downloaded only when a row is first read (a dry run counts the published rows)."""
        super().__init__(options)
        if root is not None and files is not None:
            self.root, self.files = root, files

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
        """Samples per group: four items, once per prompt sent."""
        return len(ITEMS) * len(self.options.families)

    def own_variants(self) -> dict[str, Any]:
        return dict(controls())

    def published_rows(self) -> PublishedRows | None:
        """The Hub's 1,900 groups (`rows.json`), without --data-dir."""
        if self.options.data_dir is not None:
            return None
        counts = read_counts(Path(__file__).with_name("rows.json"), [SPLIT],
                             self.options.num_samples, requests_per_row=self.per_row)
        return replace(counts, prompt_chars=PROMPT_CHARS,
                       chars_source="estimate: a question of about 70 characters and its "
                                    "suffix")

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
        """A group's four items, once per prompt family; Skip says why not."""
        qtype = question_type(row)
        questions = {c: row.text(c) for c in ("Question_0", "Question_1")}
        images = {c: _image(row, c) for c in ("Image_0", "Image_1")}
        group = f"{row.index:04d}"
        published = {item: protocols.read_label(row[answer], qtype)
                     for item, _, _, answer in ITEMS}
        layout = _layout(published)
        meta = {"group_id": group, "row": row.index, "type": qtype, "layout": layout}
        for name in ("Index", "Source"):
            if row[name] is not None:
                meta[name.lower()] = row[name]
        out = []
        for item, question, image, answer in ITEMS:
            item_id = f"{group}/{item}"
            raw = row[answer]
            text = self.corrections.corrected(item_id, "answer", raw) \
                if isinstance(raw, str) else raw
            read = protocols.read_label(text, qtype)
            target = {"original": LABELS[qtype][FIXED_LAYOUT[item]],
                      "corrected": None if read is None else LABELS[qtype][read]}
            for family in self.options.families:
                out.append(Sample(
                    id=f"{item_id}/{family}", group=qtype,
                    messages=(user(images[image], protocols.prompt(questions[question], qtype,
                                                                   family)),),
                    target=target,
                    metadata=meta | {"item": item_id, "position": item, "family": family}))
        return out

    # -- scoring -------------------------------------------------------------------------------
    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        """Every protocol that sends this prompt, under every label set asked."""
        qtype, family = sample.metadata["type"], sample.metadata["family"]
        code = protocols.extract_answer(text, qtype)
        shown = protocols.answer_label(code, qtype)
        sending = [p for p in self.options.protocols if FAMILY[p] == family]
        others = [p for p in self.options.protocols if p in HARNESSES]
        parsed: dict[str, Any] = {}
        scores: dict[str, dict] = {}
        for label_set in self.options.label_sets:
            label = sample.target.get(label_set)
            if label is None:  # an answer column that reads as neither answer
                continue
            correct = float(code == LABELS[qtype].index(label))
            for protocol in sending:
                key = score_key(protocol, label_set)
                parsed[key] = shown
                if protocol == PAPER:
                    # The harnesses read an answer as the paper does, against the same
                    # labels: on the paper's answer each would give the paper's verdict.
                    scores[key] = reference_block(correct, {
                        score_key(h, label_set): Counterfactual(None, correct)
                        for h in others})
                else:
                    scores[key] = {"correct": correct}
        return parsed, scores

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        return metrics.summarize(records, self.options, self.corrections)

    def gap_units(self, records: Iterable[Record]) -> Iterator[GapUnit]:
        """Each group's part of G-Acc (`visioneval explain`'s paired intervals)."""
        o = self.options
        return metrics.group_units(records, o.protocols, o.label_sets)

    def headline_outcome(self, record: Record) -> float | None:
        """An answer's verdict under the first protocol asked (the paper's in `all`), on its
        first label set: the per-answer Acc that --target-ci watches (G-Acc needs whole
        groups, which a random order of answers does not give)."""
        if not record.ok or family_of(record) is not None:
            return None
        key = score_key(self.options.protocols[0], self.options.label_sets[0])
        score = record.scores.get(key)
        return None if score is None else float(score["correct"])

    def headline_proportion(self) -> str | None:
        return f"Acc, per answer ({self.options.protocols[0]})"

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


def _layout(published: Mapping[str, int | None]) -> str:
    """How a group's answer columns stand to the fixed layout: "fixed" (they agree),
    "breaks" (they are readable and differ) or "unreadable" (a cell is neither answer)."""
    if any(v is None for v in published.values()):
        return "unreadable"
    return "fixed" if all(published[i] == FIXED_LAYOUT[i] for i in FIXED_LAYOUT) \
        else "breaks"


def _image(row: DataRow, column: str) -> Any:
    """The column's image as its stored bytes; Skip naming the column when it is none."""
    try:
        return row.image(column)
    except Skip as exc:
        if repr(column) in str(exc):
            raise
        raise Skip(f"column {column!r}: {exc}") from None


def _where(row: DataRow) -> str:
    index = row["Index"]
    return f"{row.index}" + (f" (Index {index})" if index is not None else "")


def build(options: Mapping[str, Any] | BaseModel) -> NaturalBench:
    """The benchmark from its options (as run.json records them); finds the data."""
    options = NaturalBenchOptions.model_validate(options)
    if options.data_dir is None:
        return NaturalBench(options)
    root, files = locate(options.data_dir)
    return NaturalBench(options, root, files)


def scoring_only(options: BaseModel) -> NaturalBench:
    """NaturalBench without data: scores and summarizes records, reads no row."""
    return NaturalBench(NaturalBenchOptions.model_validate(options), Path(), [])
