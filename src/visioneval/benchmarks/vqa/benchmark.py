"""Any image-question dataset as a benchmark: rows -> samples (image, question, options),
one scorer chosen by the user, accuracy overall and per group."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from visioneval import excerpts as stored
from visioneval.benchmarks.vqa import data, judging, metrics, prompts, scorers, tables
from visioneval.benchmarks.vqa.options import VqaOptions
from visioneval.core.benchmark import Benchmark
from visioneval.core.records import Record, Sample, SkippedRow
from visioneval.core.rows import Skip, to_samples
from visioneval.core.runfiles import BenchmarkPlan, RunInfo
from visioneval.io.parquet import DataError

if TYPE_CHECKING:
    from visioneval.backends.registry import BackendSpec
    from visioneval.core.solver import Solver

ALL = "all"  # the group of every row when no --group-col is given
MAX_CHOICES = len(scorers.LETTERS)


class Vqa(Benchmark[VqaOptions]):
    name = "vqa"

    @classmethod
    def builtin_models_for(cls, options: BaseModel | None) -> tuple[str, ...]:
        """`random` picks one of the lettered options (a chance baseline for `choice`); no
        builtin model answers the other scorers' open questions. None: some run (one with
        --scorer choice)."""
        choice = options is None or getattr(options, "scorer", None) == "choice"
        return ("random",) if choice else ()

    def __init__(self, options: VqaOptions, source: data.Source):
        super().__init__(options)
        self.source = source
        self.choices_cols, self.id_col = self._check_columns()
        self.suffix = prompts.suffix(options.scorer, options.prompt_suffix)
        self._real_folders: dict[Path, Path] = {}  # data file folders, symlinks resolved
        self.grader = judging.Grader.for_options(options) if options.scorer == "judge" \
            else None

    @property
    def judge(self) -> BackendSpec | None:
        """The judge model of `--scorer judge`; the others need none."""
        return self.grader.spec if self.grader else None

    @property
    def solve(self) -> Solver | None:
        """`--scorer judge`: the answer, then the judge's verdict on it; else one request."""
        return self.grader.solve if self.grader else None

    def _check_columns(self) -> tuple[list[str], str | None]:
        """Every file has every column asked for, before anything is sent: one DataError
        naming the file and the columns it lacks. Returns the choice and id columns."""
        o = self.options
        required = [o.image_col, o.question_col, o.answer_col,
                    *(o.choices_col or []), *(c for c in (o.id_col, o.group_col) if c)]
        # An empty file has no columns to check (a JSONL file's come from its first line).
        files = [f for f in self.source.files if data.row_count(f)]
        for path in files:
            missing = data.missing_columns(path, required)
            if missing:
                raise DataError(f"{path}: no column {', '.join(map(repr, missing))} "
                                "(name yours with --image-col, --question-col, --answer-col, "
                                "--choices-col, --id-col or --group-col)")
        choices = list(o.choices_col or [])
        if not choices and files and all(not data.missing_columns(p, ["choices"])
                                         for p in files):
            choices = ["choices"]
        if o.scorer == "choice" and not choices and files:
            raise DataError(f"{self.source.origin}: the choice scorer needs options: no "
                            "column 'choices' (name yours with --choices-col)")
        id_col = o.id_col
        if id_col is None and files and all(not data.missing_columns(p, ["id"])
                                            for p in files):
            id_col = "id"
        return choices, id_col

    # -- plan ----------------------------------------------------------------------------------
    def plan(self) -> BenchmarkPlan:
        root = self.source.root
        files = [f.relative_to(root).as_posix() for f in self.source.files]
        return BenchmarkPlan.model_validate({
            "benchmark": self.name,
            "options": self.options.model_dump(),
            "dataset": {
                "source": self.source.origin,
                "fingerprint": data.fingerprint(self.source, self.options.image_col,
                                                self.options.allow_outside_images),
                "files": {"data": files},
                "rows": {name: data.row_count(f)
                         for name, f in zip(files, self.source.files, strict=True)},
            },
        })

    def total(self) -> int:
        n = sum(data.row_count(f) for f in self.source.files)
        limit = self.options.num_samples
        return min(n, limit) if limit is not None else n

    # -- samples --------------------------------------------------------------------------------
    def _columns(self) -> list[str]:
        o = self.options
        return list(dict.fromkeys([o.image_col, o.question_col, o.answer_col,
                                   *self.choices_cols,
                                   *(c for c in (self.id_col, o.group_col) if c)]))

    def samples(self) -> Iterator[Sample | SkippedRow]:
        rows = data.iter_rows(self.source.files, self._columns(), self.options.num_samples)
        return to_samples(rows, self._sample, group=lambda row: row.file.name,
                          where=lambda row: str(row.number))

    def _sample(self, row: data.Row) -> Sample:
        """The row's sample; Skip names the column that cannot be used."""
        o = self.options
        if row.problem:
            raise Skip(row.problem)
        values = row.values
        question = values.get(o.question_col)
        if not isinstance(question, str) or not question.strip():
            raise Skip(f"column {o.question_col!r} is empty or not text")
        answer = values.get(o.answer_col)
        if answer is None or (isinstance(answer, str) and not answer.strip()):
            raise Skip(f"column {o.answer_col!r} is empty")
        try:
            options = self._choices(values)
        except ValueError as exc:
            raise Skip(f"column {self.choices_cols[0]!r} {exc}") from None
        target, problem = self._target(answer, options)
        if problem:
            raise Skip(f"column {o.answer_col!r}: {problem}")
        try:
            folder = row.file.parent
            real = self._real_folders.get(folder)
            if real is None:
                real = self._real_folders[folder] = folder.resolve()
            image = data.read_image(values.get(o.image_col), folder, o.allow_outside_images,
                                    real)
        except ValueError as exc:
            raise Skip(f"column {o.image_col!r} {exc}" if str(exc).startswith("is ")
                       else f"column {o.image_col!r}: {exc}") from None
        ident = values.get(self.id_col) if self.id_col else None
        name = str(ident) if ident not in (None, "") else f"#{row.index}"
        group = values.get(o.group_col) if o.group_col else None
        metadata: dict[str, Any] = {"file": row.file.relative_to(self.source.root).as_posix(),
                                    "row": row.number}
        if options:
            metadata["choices"] = options
        return Sample(id=name, group=str(group) if group not in (None, "") else ALL,
                      messages=prompts.messages(image, question, options, self.suffix),
                      target=target, metadata=metadata)

    def _choices(self, values: dict[str, Any]) -> list[str]:
        if not self.choices_cols:
            return []
        if len(self.choices_cols) == 1:
            cell = values.get(self.choices_cols[0])
            if cell is None or cell == "":
                if self.options.scorer == "choice":
                    raise ValueError("is empty")
                return []
            options = data.choice_list(cell)
        else:
            options = [str(values[c]) for c in self.choices_cols
                       if values.get(c) not in (None, "")]
        if self.options.scorer == "choice" and len(options) < 2:
            raise ValueError(f"has {len(options)} option(s); a question needs at least 2")
        if len(options) > MAX_CHOICES:
            raise ValueError(f"has {len(options)} options; at most {MAX_CHOICES} have letters")
        return options

    def _target(self, answer: Any, options: list[str]) -> tuple[Any, str | None]:
        """The target as scored, or why the answer cannot be one."""
        scorer = self.options.scorer
        if scorer == "choice":
            index = scorers.option_index(answer, options)
            if index is None:
                return None, (f"{_short(answer)!r} is not one of the options "
                              f"({', '.join(map(repr, options))}), their letter or index")
            return scorers.LETTERS[index], None
        if scorer == "number":
            value = scorers.target_number(answer)
            if value is None:
                return None, f"{_short(answer)!r} is not a number"
            return value, None
        if scorer == "set":
            if not scorers.labels(answer):
                return None, f"{_short(answer)!r} holds no label"
            return answer if isinstance(answer, str) else [str(a) for a in answer], None
        if isinstance(answer, list | tuple):
            return [str(a) for a in answer], None
        return str(answer), None

    # -- scoring ----------------------------------------------------------------------------------
    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        scorer = self.options.scorer
        extra: dict[str, float] = {}
        if scorer == "choice":
            options = sample.metadata["choices"]
            verdict = scorers.choice(text, options, scorers.LETTERS.index(sample.target))
            parsed: Any = verdict.parsed
        elif scorer == "number":
            verdict = scorers.number(text, float(sample.target), self.options.tolerance)
            parsed = verdict.parsed
        elif scorer == "set":
            verdict, extra = scorers.label_set(text, sample.target)
            parsed = stored.pieces(verdict.parsed, scorers.labels(sample.target))
        elif scorer == "judge":  # graded by the solver; a bare score call has no verdict
            raise ValueError("the judge scorer grades answers in its solver")
        else:
            verdict = scorers.exact(text, sample.target)
            parsed = None if verdict.parsed is None else stored.excerpt(verdict.parsed)
        return {scorer: parsed}, {scorer: verdict.scores() | extra}

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        return metrics.summarize(records, self.options.scorer)

    def headline_outcome(self, record: Record) -> float | None:
        """The headline accuracy's per-sample score, as `metrics.BlockTally` reads it."""
        return metrics.BlockTally(self.options.scorer).score(record) if record.ok else None

    def headline_proportion(self) -> str | None:
        return "accuracy"

    # -- output ------------------------------------------------------------------------------------
    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        return [tables.write(metrics, info.backend.model, directory)]


def _short(value: Any, limit: int = 60) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."


def build(options: Mapping[str, Any] | BaseModel) -> Vqa:
    """The benchmark from its options (as run.json records them); finds the data."""
    options = VqaOptions.model_validate(options)
    return Vqa(options, data.locate(options.data, options.split))
