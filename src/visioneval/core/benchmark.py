"""What a benchmark is: data + prompt + parser + metrics (`Benchmark`, what the engine runs),
and how its runs are shown (`BenchmarkDefinition`, what the registry line points at: its
command, report sections, sample-browser rows and comparison table). Nothing outside a
benchmark's folder names it; report, compare, resume and the CLI ask its definition."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import BaseModel
from rich.console import Console

from visioneval.core.records import Record, Sample, SkippedRow
from visioneval.core.runfiles import Metrics, MetricsModel

if TYPE_CHECKING:
    from visioneval.backends.registry import BackendSpec
    from visioneval.core.blocks import ComparisonTable, Section
    from visioneval.core.foreign import ForeignReader
    from visioneval.core.published import PublishedTable, RunBeside
    from visioneval.core.runfiles import BenchmarkPlan, RunInfo
    from visioneval.core.view import RunData
    from visioneval.engine.runner import Solver
    from visioneval.stats.paired import PairedRow


class Benchmark(Protocol):
    # Read-only members: a class attribute or a property of any subtype satisfies them.
    @property
    def name(self) -> str: ...

    @property
    def builtin_models(self) -> tuple[str, ...]:
        """The `builtin` backend's baselines that fit its prompts (none: ())."""

    @property
    def options(self) -> BaseModel:
        """What run.json records; `definition.build(options dict)` rebuilds the benchmark."""

    @property
    def solve(self) -> Solver | None:
        """None: one request per sample; else how a sample is answered (`Solver`)."""

    @property
    def judge(self) -> BackendSpec | None:
        """A second model the solver asks with `ask(..., judge=True)` to grade answers
        (None: no judge); the run opens, checks and closes it beside the model."""

    def plan(self) -> BenchmarkPlan:
        """The benchmark's configuration and dataset fingerprint, recorded in run.json (a
        benchmark of your own may return the same as a dict: it is checked as a
        `BenchmarkPlan` where it is recorded)."""

    def total(self) -> int:
        """Samples to run (rows before validation), for the progress bar."""

    def samples(self) -> Iterator[Sample | SkippedRow]:
        """Samples in a deterministic order, lazily: images are read as they are needed."""

    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        """Parse a response under every parser and score it: (parsed, scores)."""

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        """metrics.json, recomputed from records alone, streamed once (one record per
        sample; a big run's records are never all in memory)."""

    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        """Paper-style tables beside metrics.json (`info` is run.json)."""

    def print_summary(self, metrics: dict[str, Any], info: RunInfo,
                      console: Console) -> None:
        """The tables a user sees at the end of a run."""


# A command option's --help panel, set by its field's json_schema_extra "panel" (the data's
# panel when it names none): OWN_OPTIONS for the benchmark's own settings, listed first as
# "<name> options"; JUDGE_OPTIONS for a judge model's. The field's "shown_default" is what
# --help says it defaults to when its default is None (the benchmark then chooses).
OWN_OPTIONS = "own"
JUDGE_OPTIONS = "Judge"


@dataclass(frozen=True)
class Demo:
    """What `visioneval demo` runs offline (with the builtin `demo_model`): a benchmark and
    what to say before and after."""
    benchmark: Benchmark
    before: str
    after: str


class BenchmarkDefinition:
    """Everything visioneval knows about one benchmark besides running it. A benchmark's
    folder subclasses this once; the registry line names that instance. The defaults fit a
    benchmark that has no tables of its own: a generic sample browser and no comparison."""

    name: ClassVar[str]
    summary: ClassVar[str]  # the command's help, first sentence first
    # The command's own options (flags generated from the fields; the engine's and the
    # model's options are shared by every benchmark command). None: no command.
    command_options: ClassVar[type[BaseModel] | None] = None
    # The model options' help and defaults in the generated command.
    model_help: ClassVar[str] = "Model name as the server knows it."
    # Which options take which builtin model, when the benchmark's `builtin_models` depend
    # on them (said when a builtin model does not fit); "" when they do not.
    builtin_note: ClassVar[str] = ""
    max_tokens: ClassVar[int] = 128
    max_tokens_help: ClassVar[str] = "Most tokens an answer may have."
    # (backend, model) used when the command names no --model (a quick try); None:
    # --backend and --model are required.
    default_model: ClassVar[tuple[str, str] | None] = None
    # `visioneval data synth-NAME` writes a small offline dataset in the real schema when
    # this is set (its help), via `synth`.
    synth_help: ClassVar[str | None] = None
    synth_rows: ClassVar[int] = 100
    demo_model: ClassVar[str] = "random"  # the builtin model `demo` runs
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

    def build(self, options: dict[str, Any]) -> Benchmark:
        """The benchmark from the options run.json recorded (resume, report, compare)."""
        raise NotImplementedError

    def build_to_read(self, options: dict[str, Any]) -> Benchmark:
        """The benchmark rebuilt only to read a run (thumbnails from its data, metrics
        recomputed by `merge` or `compare --common-only`): nothing is sent and nothing is
        solved, so an option run.json records that lets the benchmark run code or read files
        beyond its data must be off here (a run directory may come from anyone): by default
        the `trust_options`."""
        return self.build(options | {name: False for name in self.trust_options
                                     if name in options})

    def from_command(self, options: BaseModel) -> Benchmark:
        """The benchmark from its command's options (an instance of `command_options`)."""
        return self.build(options.model_dump())

    def synth(self, out: Path, rows: int, seed: int) -> list[str]:
        """Write the offline dataset (see `synth_help`); the lines to print."""
        raise NotImplementedError

    def demo(self, cache_root: Path, n: int, seed: int) -> Demo:
        """The offline demo (`visioneval demo`, for the benchmark the registry names)."""
        raise NotImplementedError

    def sections(self, view: RunData) -> list[Section]:
        """The report's tables and charts for a run with records."""
        return []

    def browser_row(self, record: Record) -> dict[str, Any]:
        """How a record appears in the report's sample browser: `t` the target as text,
        `labels` its classes (a filter), `v` one view per parser or protocol with the answer
        `a` and whether it was right `ok` (None: not judged), optional `meta`."""
        views = {k: {"a": str(record.parsed.get(k, "")), "ok": _ok(v)}
                 for k, v in record.scores.items()}
        return {"t": str(record.target), "labels": [], "v": views}

    def comparison(self, views: Sequence[RunData]) -> ComparisonTable | None:
        """Several runs in one table; None: this benchmark has no comparison table."""
        return None

    def published(self) -> PublishedTable | None:
        """The paper's published numbers with their provenance (`visioneval reference`,
        `compare --reference paper`); None: none shipped."""
        return None

    def beside_published(self, view: RunData) -> RunBeside:
        """A run laid out as `published()`'s columns: the published setting it corresponds
        to, its value per column, and every run setting that differs from the published
        protocol. Only asked when `published()` is not None."""
        raise NotImplementedError

    def paired_rows(self, record: Record) -> dict[str, PairedRow]:
        """A scored record's outcomes for `visioneval compare`'s paired tests, by metric
        name (none: this benchmark is compared without paired tests)."""
        return {}

    def unparsed(self, metrics: dict[str, Any]) -> int | None:
        """Answers the headline parser could not read (the report's card); None: no notion."""
        return None

    def foreign_logs(self) -> dict[str, ForeignReader]:
        """Readers of other tools' per-sample outputs for this benchmark, by tool name (e.g.
        "lmms-eval"), for `visioneval rescore`; none by default."""
        return {}


def _ok(scores: Any) -> bool | None:
    """A score block's verdict when it has an obvious one (correct / exact_match / passed)."""
    if not isinstance(scores, dict):
        return None
    for key in ("correct", "exact_match", "passed"):
        value = scores.get(key)
        if isinstance(value, bool | int | float) and value is not None:
            return bool(value == 1)
    return None
