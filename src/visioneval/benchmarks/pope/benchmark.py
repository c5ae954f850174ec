"""POPE as a benchmark: each question -> one request per prompt (the question as it is, read
by the paper's rule and VLMEvalKit's; lmms-eval's question and suffix, read by lmms-eval's),
scored against the Hub's label and RePOPE's corrected one; metrics per protocol side by side."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from visioneval.benchmarks.pope import metrics, scoring, tables
from visioneval.benchmarks.pope.data import Located, locate
from visioneval.benchmarks.pope.judging import Judge
from visioneval.benchmarks.pope.labels import corrected
from visioneval.benchmarks.pope.options import PopeOptions
from visioneval.benchmarks.pope.spec import (
    COLUMNS,
    LMMS,
    LMMS_SUFFIX,
    NO,
    OPTIONAL_COLUMNS,
    PAPER,
    YES,
)
from visioneval.core.benchmark import Benchmark
from visioneval.core.gap import GapUnit
from visioneval.core.records import Record, Sample, SkippedRow, user
from visioneval.core.rowcounts import read_counts
from visioneval.core.rows import DataRow, ParquetRows, Skip
from visioneval.core.runfiles import RunInfo

if TYPE_CHECKING:
    from visioneval.backends.registry import BackendSpec
    from visioneval.core.rowcounts import PublishedRows
    from visioneval.core.solver import Solver

__all__ = ["Pope", "PopeOptions", "build", "prompt", "scoring_only"]


def prompt(family: str, question: str) -> str:
    """The text a family sends: the question as the dataset has it ([P] main.py's template;
    [V] ImageBaseDataset.build_prompt), or lmms-eval's: the question stripped and its suffix
    ([L] utils.py `pope_doc_to_text`, pre_prompt "" and post_prompt from pope.yaml)."""
    return question.strip() + LMMS_SUFFIX if family == LMMS else question


class Pope(Benchmark[PopeOptions]):
    name = "pope"
    builtin_models = ("random",)

    def __init__(self, options: PopeOptions, located: Located | None = None):
        """`located`: the local copy (--data-dir), or None for the Hub's, found or
        downloaded only when a row is first read (a dry run counts the published rows)."""
        super().__init__(options)
        if located is not None:
            self.located = located
        self.judging = Judge.for_options(options)

    @property
    def judge(self) -> BackendSpec | None:
        """VLMEvalKit's judge (`--judge-model`), which reads the answers its rules cannot."""
        return self.judging.spec if self.judging else None

    @property
    def solve(self) -> Solver | None:
        """With a judge: the answer, then the judge on an Unknown one; else one request."""
        return self.judging.solver(self.score) if self.judging else None

    @property
    def one_request_each(self) -> bool:
        """A judge is asked for some answers only: a dry run still prices the questions."""
        return True

    @cached_property
    def located(self) -> Located:
        return locate(None, self.options.settings)

    def published_rows(self) -> PublishedRows | None:
        """The Hub's rows of the settings asked (`rows.json`), without --data-dir; each
        question is "Is there a(n) <object> in the image?", counted at its typical length."""
        if self.options.data_dir is not None:
            return None
        counts = read_counts(Path(__file__).with_name("rows.json"), self.options.settings,
                             self.options.num_samples, requests_per_row=self.per_row)
        suffix = len(LMMS_SUFFIX) * (LMMS in self.options.families) / self.per_row
        return replace(counts, prompt_chars=round(counts.prompt_chars + suffix))

    @property
    def per_row(self) -> int:
        """Samples per question: one per prompt family."""
        return len(self.options.families)

    def data(self) -> ParquetRows:
        located = self.located
        return ParquetRows(located.root, located.files, COLUMNS, OPTIONAL_COLUMNS,
                           limit=self.options.num_samples, source=located.source)

    def total(self) -> int:
        rows = self.located.rows
        if rows is None:
            return super().total()
        limit = self.options.num_samples
        return sum(min(len(r), limit) if limit else len(r) for r in rows.values()) * \
            self.per_row

    def dataset(self) -> dict[str, Any]:
        found = super().dataset()
        if self.located.rows is not None:  # the `test` layout: each setting's own rows
            found["rows"] = {s: len(r) for s, r in self.located.rows.items()}
            found["layout"] = "test (the default config: category names the setting)"
        return found

    # -- samples -----------------------------------------------------------------------------
    def samples(self) -> Iterator[Sample | SkippedRow]:
        rows = self._rows
        assert rows is not None
        for setting in self.options.settings:
            yield from rows.group_samples(setting, self._row_samples, per_row=self.per_row,
                                          wanted=self._wanted(setting), where=_where)

    def _wanted(self, setting: str) -> set[int] | None:
        """The `test` layout's rows of the setting (the first --num-samples of them)."""
        rows = self.located.rows
        if rows is None:
            return None
        return set(rows[setting][:self.options.num_samples])

    def _row_samples(self, row: DataRow) -> list[Sample]:
        """One sample per prompt family, sharing the row's image; Skip says why not."""
        setting = row.group
        question_id = row.text("question_id").strip()
        question = row.text("question")
        image_source = row.text("image_source").strip()
        answer = row.text("answer").strip().lower()
        if answer not in (YES, NO):
            raise Skip(f"column 'answer' is {row['answer']!r}, not yes or no")
        category = row["category"]
        if isinstance(category, str) and category.strip().lower() != setting:
            raise Skip(f"column 'category' is {category!r} in the {setting} split")
        image = row.image()
        item = f"{setting}/{question_id}"
        fixed = corrected(item, image_source, question, answer)
        meta: dict[str, Any] = {"item": item, "setting": setting, "question_id": question_id,
                                "image": image_source, "question": question, "row": row.index}
        if fixed.problem:
            meta["label_problem"] = fixed.problem
        target = {"answer": answer, "corrected": fixed.label}
        return [Sample(id=f"{item}/{family}", group=setting,
                       messages=(user(image, prompt(family, question)),), target=target,
                       metadata=meta | {"family": family})
                for family in self.options.families]

    # -- scoring -------------------------------------------------------------------------------
    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        """Every protocol of the run that reads this prompt, on the same answer (the Hub's
        label)."""
        parsed, scores = scoring.score(sample.metadata["family"], text, sample.target["answer"])
        wanted = self.options.protocols
        return ({p: v for p, v in parsed.items() if p in wanted},
                {p: v for p, v in scores.items() if p in wanted})

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        o = self.options
        return metrics.summarize(records, o.protocols, o.settings, o.label_sets)

    def gap_units(self, records: Iterable[Record]) -> Iterator[GapUnit]:
        """Each answer's part of F1, its image the cluster (`visioneval explain`'s paired
        intervals)."""
        o = self.options
        return metrics.image_units(records, o.protocols, o.settings, o.label_sets)

    def headline_outcome(self, record: Record) -> float | None:
        """The paper's reading right or wrong (Hub labels), over every setting's questions:
        the accuracy `--target-ci` watches (the headline F1 is not a share of questions)."""
        if not record.ok or record.metadata.get("family") != PAPER:
            return None
        return float(record.scores.get(PAPER, {}).get("correct", 0.0))

    def headline_proportion(self) -> str | None:
        return "accuracy (the paper's reading, every setting's questions)" \
            if PAPER in self.options.protocols else None

    # -- output ---------------------------------------------------------------------------------
    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        return tables.write(metrics, self.options, directory)


def _where(row: DataRow) -> str:
    raw = row["question_id"]
    return f"question_id {raw}" if isinstance(raw, str) and raw.strip() else f"#{row.index}"


def build(options: Mapping[str, Any] | BaseModel) -> Pope:
    """The benchmark from its options (as run.json records them); finds the data."""
    options = PopeOptions.model_validate(options)
    if options.data_dir is None:
        return Pope(options)
    return Pope(options, locate(options.data_dir, options.settings))


def scoring_only(options: BaseModel) -> Pope:
    """POPE without data: scores and summarizes records, reads no row."""
    options = PopeOptions.model_validate(options)
    return Pope(options, Located(Path(), {s: [] for s in options.settings}))
