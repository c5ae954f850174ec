"""What a benchmark is: data + prompt + scorer + metrics (`Benchmark`, what the engine runs),
and how its runs are shown (`BenchmarkDefinition`, what the registry line points at: its
options, command, terminal tables, report sections, sample-browser rows and comparison
table).

Both are base classes whose defaults fit a simple image-question benchmark: a benchmark
names its options, says how a row becomes a sample and how an answer is scored, and gets its
plan, progress total, accuracy with a bootstrap interval, tables, report and comparison. What
only some benchmarks have (published numbers, other tools' logs, synthetic data, a demo,
paired tests) are separate capabilities (`core/capabilities.py`). Nothing outside a
benchmark's folder names it; report, compare, resume and the CLI ask its definition."""

from __future__ import annotations

import difflib
import hashlib
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Generic,
    TypeVar,
    Union,
    get_args,
    get_origin,
)

import orjson
from pydantic import AfterValidator, BaseModel, PlainSerializer
from rich.console import Console

from visioneval.core import accuracy
from visioneval.core.accuracy import score
from visioneval.core.bounds import first_unrecordable
from visioneval.core.epoch_ids import EXPECTED_KEYS
from visioneval.core.printed import print_sections
from visioneval.core.records import Record, Sample, SkippedRow
from visioneval.core.runfiles import BenchmarkPlan, Metrics, MetricsModel

if TYPE_CHECKING:
    from visioneval.core.backend_spec import BackendSpec
    from visioneval.core.blocks import ComparisonTable, Section
    from visioneval.core.commandline import CommandLine
    from visioneval.core.headline import Headline
    from visioneval.core.rowcounts import PublishedRows
    from visioneval.core.rows import DataRow, Made, ParquetRows
    from visioneval.core.runfiles import RunInfo
    from visioneval.core.solver import Solver
    from visioneval.core.view import ReadableRun

OptionsT = TypeVar("OptionsT", bound=BaseModel)

LocalPath = Annotated[Path, AfterValidator(lambda path: path.resolve()),
                      PlainSerializer(str, return_type=str)]
"""An options field naming a local file or folder: recorded in run.json as an absolute path
(symlinks resolved), so a resume from another folder finds it."""

# A command option's --help panel, set by its field's json_schema_extra "panel" (the data's
# panel when it names none): OWN_OPTIONS for the benchmark's own settings, listed first as
# "<name> options"; JUDGE_OPTIONS for a judge model's; OUTPUT_OPTIONS beside --out. The
# field's "shown_default" is what --help says it defaults to when its default is None (the
# benchmark then chooses); its "flag", the flag's spelling when it is not --the-field-name.
OWN_OPTIONS = "own"
JUDGE_OPTIONS = "Judge"
OUTPUT_OPTIONS = "Output"


def option_values(model: type[BaseModel], given: Mapping[str, Any]) -> dict[str, Any]:
    """Option values as a command line gives them, ready for the options model: a comma
    list for a list field becomes a list; None (not given) is left out."""
    values = {}
    for name, value in given.items():
        if value is None:
            continue
        field = model.model_fields.get(name)
        if field is not None and isinstance(value, str) and _is_list(field.annotation):
            value = [v.strip() for v in value.split(",") if v.strip()]
        values[name] = value
    return values


def _is_list(annotation: Any) -> bool:
    """Whether a field holds a list (`list[X]`, `list[X] | None`)."""
    if get_origin(annotation) in (Union, types.UnionType):
        return any(_is_list(a) for a in get_args(annotation))
    return get_origin(annotation) is list


class Benchmark(Generic[OptionsT]):
    """What the engine runs, built from its options (`self.options`, recorded in run.json).

    A subclass gives `name`, `score` and either `data()` + `sample(row)` (rows of parquet
    files, `core/rows.py`) or `samples()`. Every other member has a default: `plan()`
    records the options and the data's fingerprint, the total comes from the data,
    `summarize` is accuracy with a bootstrap interval over each record's `metric` score
    (`core/accuracy.py`), its table is written as results.csv, one request per sample
    (`solve` None), no judge model and no panel. How a run is shown (the terminal, the
    report) is its `BenchmarkDefinition`'s."""

    name: ClassVar[str] = ""
    options_model: ClassVar[type[BaseModel] | None] = None  # set by `Benchmark[Options]`
    metric: ClassVar[str] = "correct"  # the score key the default `summarize` averages

    def __init__(self, options: OptionsT):
        self.options = options

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            found = [a for a in get_args(base) if isinstance(a, type)
                     and issubclass(a, BaseModel)]
            if found:
                cls.options_model = found[0]

    @classmethod
    def builtin_models_for(cls, options: BaseModel | None) -> tuple[str, ...]:
        """The `builtin` backend's baselines that fit a run with `options` (None: a run with
        some options), read from the class alone: building a benchmark reads its data, and
        `visioneval list` must not. By default the class's own `builtin_models` tuple; a
        benchmark whose baselines depend on its options overrides this instead."""
        declared = getattr(cls, "builtin_models", ())
        return declared if isinstance(declared, tuple) else ()

    @property
    def builtin_models(self) -> tuple[str, ...]:
        """The `builtin` backend's baselines that fit its prompts (none: ())."""
        return type(self).builtin_models_for(self.options)

    @property
    def solve(self) -> Solver | None:
        """None: one request per sample; else how a sample is answered (`Solver`)."""
        return None

    @property
    def one_request_each(self) -> bool:
        """Whether every sample is exactly one model request, which a dry run can price
        (without a solver it is; a solver that only chooses what to ask says so too)."""
        return self.solve is None

    @property
    def judge(self) -> BackendSpec | None:
        """A second model the solver asks with `ask(..., judge=True)` to grade answers
        (None: no judge); the run opens, checks and closes it beside the model."""
        return None

    @property
    def panel(self) -> tuple[BackendSpec, ...]:
        """Further models the solver asks by position, `ask(..., panel=k)` for the k-th
        (1-based): several judges grading one answer, each asked through the same cache,
        retries and cost as the model. Each is opened, checked and closed beside the model,
        its identity recorded in every session, and a resume refuses one that now serves
        another checkpoint, as for the judge. None by default: ()."""
        return ()

    def panel_of(self, sample: Sample) -> int:
        """Which model answers the sample: 0 the run's model, k the k-th panel model (the
        dry run counts and prices each sample with the model that answers it)."""
        return 0

    @property
    def per_row(self) -> int:
        """Samples each data row makes (the progress total, a skipped row's count)."""
        return 1

    def own_variants(self) -> dict[str, Any]:
        """Request variants only this benchmark can make (`--variant NAME`), by name: each a
        `visioneval.variants.kinds.Variant` (none by default)."""
        return {}

    # -- data -------------------------------------------------------------------------------
    def data(self) -> ParquetRows | None:
        """The parquet rows the samples are made of (`sample` makes each row's), or None
        when `samples` makes them another way."""
        return None

    @cached_property
    def _rows(self) -> ParquetRows | None:
        return self.data()

    def plan(self) -> BenchmarkPlan:
        """The benchmark's configuration and dataset fingerprint, recorded in run.json (a
        benchmark that overrides it may return the same as a dict: it is checked as a
        `BenchmarkPlan` where it is recorded)."""
        return BenchmarkPlan.model_validate({
            "benchmark": self.name, "options": self.options.model_dump(mode="json"),
            "dataset": self.dataset()})

    def dataset(self) -> dict[str, Any]:
        """run.json's `dataset`: the files and their fingerprint; without `data()`, a
        fingerprint of the samples themselves (ids, targets, prompts, image hashes)."""
        if self._rows is not None:
            return self._rows.dataset()
        digest = hashlib.sha256()
        for item in self.samples():
            if isinstance(item, SkippedRow):
                digest.update(item.line().encode())
                continue
            digest.update(orjson.dumps([item.id, item.group, item.target, [
                [p if isinstance(p, str) else p.sha256 for p in m.parts]
                for m in item.messages]], default=str))
        return {"source": f"made by {self.name or type(self).__name__}",
                "fingerprint": digest.hexdigest()}

    def published_rows(self) -> PublishedRows | None:
        """The published dataset's row counts, when the run reads the published data and
        its benchmark ships them (`core/rowcounts.py`): a dry run then counts the requests
        from them and downloads nothing. None: the data is counted as it is read."""
        return None

    def total(self) -> int:
        """Samples to run (rows before validation), for the progress bar."""
        if self._rows is not None:
            return self._rows.count() * self.per_row
        return sum(item.samples if isinstance(item, SkippedRow) else 1
                   for item in self.samples())

    def samples(self) -> Iterator[Sample | SkippedRow]:
        """Samples in a deterministic order, lazily: images are read as they are needed."""
        if self._rows is None:
            raise NotImplementedError(f"{type(self).__name__}: give data() and sample(row), "
                                      "or samples()")
        return self._rows.samples(self.sample, per_row=self.per_row)

    def sample(self, row: DataRow) -> Made:
        """A row's sample(s); raise `core.rows.Skip` with the reason to skip the row."""
        raise NotImplementedError(f"{type(self).__name__}: give sample(row)")

    # -- scoring ------------------------------------------------------------------------------
    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        """Parse a response under every parser and score it: (parsed, scores)."""
        raise NotImplementedError(f"{type(self).__name__}: give score(sample, text)")

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        """metrics.json, recomputed from records alone, streamed once (one record per
        sample; a big run's records are never all in memory)."""
        return accuracy.summarize(records, self.metric)

    def model_use(self) -> str | None:
        """What in this run asks the model, said when a command whose model is optional
        (`CommandLine.model_optional`) names none ("cases.yaml uses judges"); None: nothing
        does, and the run goes on without a model."""
        return None

    def headline_outcome(self, record: Record) -> float | None:
        """The record's outcome in the headline proportion, in [0, 1] (1 right, 0 wrong),
        which `--target-ci`'s stopping rule is fed; None: the record does not count toward
        it (a failed request). By default the `metric` score the default `summarize`
        averages, read as `core/accuracy.py` reads it."""
        return score(record, self.metric) if record.ok else None

    def headline_proportion(self) -> str | None:
        """What the stopping rule watches, in a few words ("accuracy"); None when the
        headline is not a proportion of samples (a benchmark that summarizes its own way
        says what its `headline_outcome` counts, or keeps None and `--target-ci` is
        refused)."""
        return "accuracy" if type(self).summarize is Benchmark.summarize else None

    # -- output -------------------------------------------------------------------------------
    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        """Paper-style tables beside metrics.json (`info` is run.json)."""
        return [accuracy.write_csv(metrics, directory)] if accuracy.is_accuracy(metrics) \
            else []


class BenchmarkDefinition:
    """Everything visioneval knows about one benchmark besides running it: its one options
    model (the command's flags, run.json's `options` and the Python API's `options`), how it
    is built, and how its runs are shown. A benchmark's folder subclasses this once; the
    registry line names that instance. A definition that names its `benchmark` class needs
    nothing else: name and options model come from the class, and the defaults show the
    default metrics (their table, the generic sample browser, a comparison of accuracy)."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""  # the command's help, first sentence first
    # The benchmark's options: every field is a flag of its command (generated), a key of
    # run.json's `options` and of the Python API's `options`. None: no options.
    options_model: ClassVar[type[BaseModel] | None] = None
    # The class built from the options (`make`); None: the definition overrides `make`
    # (a heavy module imported only when a benchmark is built).
    benchmark: ClassVar[type[Benchmark[Any]] | None] = None
    command: ClassVar[bool] = True  # a generated `visioneval NAME` (False: none)
    # How that command departs from the shared flags (its own spellings, refused flags, what
    # it says at the end: core/commandline.py); None: it has the shared flags as they are.
    command_line: ClassVar[CommandLine | None] = None
    # The model options' help and defaults in the generated command.
    model_help: ClassVar[str] = "Model name as the server knows it."
    # Which options take which builtin model, when the benchmark's `builtin_models` depend
    # on them (said when a builtin model does not fit); "" when they do not.
    builtin_note: ClassVar[str] = ""
    max_tokens: ClassVar[int] = 128
    max_tokens_help: ClassVar[str] = "Most tokens an answer may have."
    # Options (keys of run.json's `options`) whose difference changes the numbers:
    # `visioneval compare` flags runs that differ in them.
    settings_that_matter: ClassVar[tuple[str, ...]] = ()
    # What a resume takes from its command line, never from run.json (a run directory may
    # come from anyone): the options naming a judge's server and key variable
    # (`judge_target`, as (url option, key option)), and those that grant trust, such as
    # running a case file's scripts (`trust_options`: off unless given again).
    judge_target: ClassVar[tuple[str, str] | None] = None
    trust_options: ClassVar[tuple[str, ...]] = ()
    # The command's flags naming the model's server and key variable (for the lines that
    # say how to resume).
    target_flags: ClassVar[tuple[str, str]] = ("--base-url", "--api-key-env")
    # The shape of its metrics.json (what `summarize` returns), which checks the summary
    # before the file is written; the default is any JSON object.
    metrics_model: ClassVar[MetricsModel] = Metrics

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        made = cls.__dict__.get("benchmark")
        if made is not None:
            if not cls.__dict__.get("name"):
                cls.name = made.name
            if cls.__dict__.get("options_model") is None:
                cls.options_model = made.options_model

    @property
    def command_options(self) -> type[BaseModel] | None:
        """The options model when `visioneval NAME` (and `visioneval run NAME -o ...`) is
        generated from it with the shared flags as they are; None when the benchmark has no
        command or its command departs from them (`command_line`: `visioneval run` knows
        only the shared flags)."""
        return self.options_model if self.command and self.command_line is None else None

    def validate_options(self, options: Mapping[str, Any] | BaseModel | None) -> BaseModel:
        """The options model from a dict (run.json, Python) or an instance of it; a bad
        value is the model's ValidationError."""
        model = self.options_model
        if model is None:
            raise ValueError(f"{self.name or 'this benchmark'} has no options model")
        if isinstance(options, model):
            checked = options
        else:
            given = options.model_dump() if isinstance(options, BaseModel) \
                else dict(options or {})
            checked = model.model_validate(given)
        if found := first_unrecordable(checked.model_dump()):
            where = "".join(f"[{p + 1}]" if isinstance(p, int) else f".{p}" for p in found[0])
            raise ValueError(f"option {where.lstrip('.')}: {found[1]}")
        return checked

    def unknown_option(self, names: Iterable[str]) -> tuple[str, str] | None:
        """(the first of `names` that is not one of the benchmark's options, why), the why
        naming the nearest option: an options model takes no unknown key silently, so a
        misspelt `num_sample` would otherwise run every sample. None when all are known (or
        the benchmark has no options model to check against)."""
        model = self.options_model
        if model is None:
            return None
        known = list(model.model_fields)
        for name in names:
            if name in known:
                continue
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean {close[0]}?" if close else \
                f"its options: {', '.join(known)}"
            return name, f"{self.name or 'this benchmark'} has no option {name}; {hint}"
        return None

    def build(self, options: Mapping[str, Any] | BaseModel) -> Benchmark[Any]:
        """The benchmark from its options: as run.json recorded them (resume, report,
        compare), as Python gave them, or the command's parsed flags."""
        return self.make(self.validate_options(options))

    def make(self, options: BaseModel) -> Benchmark[Any]:
        """The benchmark from checked options: `benchmark(options)` by default."""
        if self.benchmark is None:
            raise ValueError(f"{type(self).__name__} names no benchmark class: set "
                             "`benchmark = YourBenchmark` in it, or override make()")
        return self.benchmark(options)

    def from_command(self, options: BaseModel) -> Benchmark[Any]:
        """The benchmark from options a user just gave (flags, the Python API, a suite
        file), rather than recorded ones: `build`, where a benchmark may add advice naming
        its flags to an error."""
        return self.build(options)

    def resumed_options(self, options: dict[str, Any], given: Mapping[str, Any]
                        ) -> dict[str, Any]:
        """The options a resume continues with, after the common rules (trust off unless
        given again, the judge's server as given): a definition whose options name further
        servers (evaluate's panel of judges) has them named again here. `given`: what the
        resuming command line passed."""
        return options

    def build_to_read(self, options: dict[str, Any]) -> Benchmark[Any]:
        """The benchmark rebuilt only to read a run (thumbnails from its data, metrics
        recomputed by `merge` or `compare --common-only`): nothing is sent and nothing is
        solved, so an option run.json records that lets the benchmark run code or read files
        beyond its data must be off here (a run directory may come from anyone): by default
        the `trust_options`."""
        return self.build(options | {name: False for name in self.trust_options
                                     if name in options})

    def benchmark_class(self) -> type[Benchmark[Any]] | None:
        """The class `make` builds, for what is read from the class alone (its builtin
        models): `benchmark`, or, in a definition that imports it only in `make`, the same
        import here."""
        return self.benchmark

    def builtin_models(self) -> tuple[str, ...]:
        """The `builtin` backend's baselines that fit some run of it (`visioneval list`),
        without building it (`Benchmark.builtin_models_for`); `builtin_note` says which
        options take them when that depends on the options."""
        made = self.benchmark_class()
        return made.builtin_models_for(None) if made is not None else ()

    def listed_variants(self) -> list[ListedVariant]:
        """Request variants only this benchmark makes, as `visioneval list` names them
        (none by default)."""
        return []

    def headline(self, metrics: dict[str, Any]) -> Headline | None:
        """The run's main number as a list of runs shows it (`visioneval runs`), read from
        metrics.json alone: the default metrics' accuracy with its interval; None when the
        benchmark names none. A number that cannot be read is a Headline whose
        `unavailable` says why (never 0)."""
        return accuracy.headline(metrics)

    def sections(self, view: ReadableRun) -> list[Section]:
        """The report's tables and charts for a run with records: the default metrics'
        table (`core/accuracy.py`); for metrics of another shape, the accuracy recomputed
        from the records' `metric` score (when they carry it) and every number of
        metrics.json."""
        if accuracy.is_accuracy(view.metrics):
            return [accuracy.section(view.metrics)]
        made = self.benchmark or Benchmark
        return accuracy.own_sections(view, made.metric)

    def browser_row(self, record: Record) -> dict[str, Any]:
        """How a record appears in the report's sample browser: `t` the target as text,
        `labels` its classes (a filter), `v` one view per parser or protocol with the answer
        `a` and whether it was right `ok` (None: not judged), optional `meta`."""
        # The answer's expected outcome (`--score expected`) is no parser's answer.
        parsed = {k: v for k, v in record.parsed.items() if k not in EXPECTED_KEYS}
        only = next(iter(parsed.values())) if len(parsed) == 1 else ""  # one answer for all
        views = {k: {"a": str(parsed.get(k, only) or ""), "ok": _ok(v)}
                 for k, v in record.scores.items()}
        return {"t": str(record.target), "labels": [], "v": views}

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable | None:
        """Several runs in one table: accuracy per run for the default metrics; None for
        metrics of another shape (`compare` then shows the share answered)."""
        return accuracy.comparison(self.name or (views[0].benchmark if views else ""), views)

    def unparsed(self, metrics: dict[str, Any]) -> int | None:
        """Answers the headline parser could not read (the report's card); None: no notion."""
        return None

    # -- the terminal -------------------------------------------------------------------------
    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        """The table a run ends with, within 100 columns: the headline numbers with their
        95% intervals (the run's other tables are in its report and `visioneval show`). By
        default the default metrics' table; nothing for metrics of another shape."""
        if accuracy.is_accuracy(view.metrics):
            accuracy.show(view.metrics, f"{view.benchmark}: {view.model}", console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        """Every table of a run in the terminal, within 100 columns (`visioneval show`,
        which reads the run directory only): by default the main table, then the report's
        sections as text when the definition draws its own."""
        self.print_main_table(view, console)
        if type(self).sections is not BenchmarkDefinition.sections:
            print_sections(self.sections(view), console)


@dataclass(frozen=True)
class ListedVariant:
    """A benchmark's own request variant as `visioneval list` shows it: its name, what it
    changes, and the flag that asks for it."""

    name: str
    help: str
    asked_by: str


def _ok(scores: Any) -> bool | None:
    """A score block's verdict when it has an obvious one (correct / exact_match / passed)."""
    if not isinstance(scores, dict):
        return None
    for key in ("correct", "exact_match", "passed"):
        value = scores.get(key)
        if isinstance(value, bool | int | float) and value is not None:
            return bool(value == 1)
    return None
