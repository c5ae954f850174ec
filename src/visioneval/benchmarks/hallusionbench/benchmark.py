"""HallusionBench as a benchmark: one request per question (the question, after its figure
when it has one), scored under every protocol asked and each label set; metrics per protocol
side by side, and why the protocols differ item by item."""

# Imports inside functions: the judge steps load only when a judge model is asked.

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from visioneval.benchmarks.hallusionbench import metrics, scoring, tables
from visioneval.benchmarks.hallusionbench.data import locate
from visioneval.benchmarks.hallusionbench.items import Item, parse_row
from visioneval.benchmarks.hallusionbench.options import HallusionBenchOptions
from visioneval.benchmarks.hallusionbench.spec import HF_REPO, REFERENCE, SPLITS
from visioneval.benchmarks.hallusionbench.spec import TEXT_COLUMNS as _TEXT
from visioneval.core.benchmark import Benchmark
from visioneval.core.gap import GapUnit
from visioneval.core.records import Record, Sample, SkippedRow, user
from visioneval.core.rowcounts import read_counts
from visioneval.core.rows import DataRow, ParquetRows, Skip
from visioneval.core.runfiles import RunInfo
from visioneval.core.store import RunStore
from visioneval.harness.corrections import Corrections
from visioneval.harness.differences import write_run_csv

if TYPE_CHECKING:
    from visioneval.backends.registry import BackendSpec
    from visioneval.core.rowcounts import PublishedRows
    from visioneval.core.solver import Solver

__all__ = ["HallusionBench", "HallusionBenchOptions", "build", "scoring_only"]

CORRECTIONS = Path(__file__).with_name("corrections.json")
REQUIRED = tuple(c for c in _TEXT if c not in ("sample_note", "filename"))
OPTIONAL = ("sample_note", "filename", "image")


class HallusionBench(Benchmark[HallusionBenchOptions]):
    name = "hallusionbench"
    builtin_models = ("random",)  # a uniform Yes or No

    def __init__(self, options: HallusionBenchOptions, root: Path | None = None,
                 files: dict[str, list[Path]] | None = None):
        """`root` and `files`: the local copy (--data-dir), or None for the Hub's, found or
        downloaded only when a row is first read (a dry run counts the published rows)."""
        super().__init__(options)
        if root is not None and files is not None:
            self.root, self.files = root, files
        self.corrections = Corrections.load(CORRECTIONS)

    @property
    def splits(self) -> list[str]:
        """The questions without a figure are the paper's alone."""
        return list(SPLITS) if self.options.asks_text_only else ["image"]

    @cached_property
    def _located(self) -> tuple[Path, dict[str, list[Path]]]:
        return locate(None, self.splits)

    @cached_property
    def root(self) -> Path:
        return self._located[0]

    @cached_property
    def files(self) -> dict[str, list[Path]]:
        return self._located[1]

    def published_rows(self) -> PublishedRows | None:
        """The Hub's row counts (`rows.json`), without --data-dir: a dry run downloads
        nothing."""
        if self.options.data_dir is not None:
            return None
        counts = read_counts(Path(__file__).with_name("rows.json"), self.splits,
                             self.options.num_samples)
        return replace(counts, text_only=("non_image",))

    def data(self) -> ParquetRows:
        source = str(self.options.data_dir) if self.options.data_dir else \
            f"hf://{HF_REPO}"
        return ParquetRows(self.root, self.files, REQUIRED, OPTIONAL,
                           limit=self.options.num_samples, source=source)

    # -- samples ---------------------------------------------------------------------------
    def samples(self) -> Iterator[Sample | SkippedRow]:
        rows = self.data()
        for split in self.splits:
            yield from rows.group_samples(split, self._sample, where=_where)

    def _sample(self, row: DataRow) -> Sample:
        try:
            item = parse_row(row.values)
        except ValueError as exc:
            raise Skip(str(exc)) from None
        if not item.has_image and not self.options.asks_text_only:
            raise Skip("asked without a figure (visual_input 0): only the paper's protocol "
                       "asks it")
        parts = (row.image(), item.question) if item.has_image else (item.question,)
        meta = item.metadata() | {"split": row.group, "row": row.index}
        for column in ("sample_note", "filename"):
            if isinstance(row[column], str):
                meta[column] = row[column]
        return Sample(id=item.key, group=item.l2, messages=(user(*parts),),
                      target={"gt_answer": item.gt_answer,
                              "gt_answer_details": item.gt_answer_details},
                      metadata=meta)

    # -- scoring -----------------------------------------------------------------------------
    def items(self, sample: Sample) -> dict[str, Item]:
        """The sample's item under each label set asked (corrections applied)."""
        target = sample.target if isinstance(sample.target, dict) else {}
        question = sample.messages[-1].text() if sample.messages else ""
        item = Item.from_metadata(sample.metadata, question,
                                  str(target.get("gt_answer_details", "")))
        out = {}
        for label_set in self.options.label_sets:
            if label_set == "original":
                out[label_set] = item
                continue
            fixed = {f: self.corrections.corrected(item.key, f, getattr(item, f))
                     for f in ("gt_answer", "gt_answer_details")}
            out[label_set] = replace(item, **fixed)
        return out

    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        return scoring.score(self.items(sample), text, self.options.protocols, {})

    @cached_property
    def _judging(self) -> Any:
        from visioneval.benchmarks.hallusionbench.judging import Judges

        return Judges.for_options(self.options, self.items)

    @property
    def judge(self) -> BackendSpec | None:
        """The paper's grader (`--judge-model`), when asked."""
        return self._judging.grader_spec if self._asks_judges else None

    @property
    def panel(self) -> tuple[BackendSpec, ...]:
        """VLMEvalKit's Yes/No matcher (`--vlmevalkit-judge-model`) as the first panel
        model, when asked."""
        return self._judging.panel if self._asks_judges else ()

    @property
    def solve(self) -> Solver | None:
        """With a judge model: the answer, then each judge step; else one request."""
        return self._judging.solve if self._asks_judges else None

    @property
    def _asks_judges(self) -> bool:
        return self.options.judge_model is not None or \
            self.options.vlmevalkit_judge_model is not None

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        o = self.options
        note = {"manifest": self.corrections.version,
                "corrections": len(self.corrections.corrections),
                "searched": self.corrections.searched}
        return metrics.summarize(records, o.protocols, o.label_sets, note)

    def gap_units(self, records: Iterable[Record]) -> Iterator[GapUnit]:
        """Each question's part of aAcc, drawn by set (`visioneval explain`'s paired
        intervals)."""
        return metrics.question_units(records, self.options.protocols, self.options.label_sets)

    def headline_outcome(self, record: Record) -> float | None:
        """The first protocol's verdict: its aAcc is the headline."""
        score = record.scores.get(self.options.protocols[0]) if record.ok else None
        return None if score is None else float(score["correct"])

    def headline_proportion(self) -> str | None:
        return f"aAcc ({self.options.protocols[0]})"

    # -- output ------------------------------------------------------------------------------
    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        """results.csv (every protocol's metrics) and, with the paper's protocol and
        another, protocols.csv (every item a cause moved), the journal streamed again."""
        out = [tables.write(metrics, directory)]
        protocols = self.options.protocols
        if REFERENCE in protocols and len(protocols) > 1:
            records = RunStore(directory, info).iter_latest()
            out.append(write_run_csv(records, REFERENCE, protocols,
                                     directory / "protocols.csv"))
        return out


def _where(row: DataRow) -> str:
    """A row's name as the paper's code names a question (category_subcategory_set_figure_
    question, as the row spells them), and its place in the split."""
    fields = [row[c] for c in ("category", "subcategory", "set_id", "figure_id",
                               "question_id")]
    name = "_".join(str(f).strip() if isinstance(f, str) and f.strip() else "?"
                    for f in fields)
    return f"{name} (#{row.index})"


def build(options: Mapping[str, Any] | BaseModel) -> HallusionBench:
    """The benchmark from its options (as run.json records them); finds the data."""
    options = HallusionBenchOptions.model_validate(options)
    if options.data_dir is None:
        return HallusionBench(options)
    splits = list(SPLITS) if options.asks_text_only else ["image"]
    root, files = locate(options.data_dir, splits)
    return HallusionBench(options, root, files)


def scoring_only(options: BaseModel) -> HallusionBench:
    """HallusionBench without data: scores and summarizes records, reads no row."""
    options = HallusionBenchOptions.model_validate(options)
    return HallusionBench(options, Path(), {split: [] for split in SPLITS})

