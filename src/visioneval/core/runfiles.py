"""run.json and metrics.json as typed records, and the migration of every earlier format.

`RunInfo` is run.json: what was run (benchmark, options, data), on what (backend, generation
and engine settings), every session that ran it, and the counts at its last end. `RunStore`
(core/store.py) is the one reader and writer of the file: it migrates what it reads to the
current format (`migrate`), validates it into a RunInfo (one line naming the file and the
field when it is not one) and writes it from the model, atomically.

A key is written when it was read or set, never because it has a default (`to_json` dumps
with `exclude_unset`): a run that has no shard, judge or counts yet has no such key, and a
file read and written again keeps the keys it had. The blocks are closed (an unknown key is
an error naming it) except where a block belongs to someone else: a benchmark's `options`
(its own options model validates them), its description of its data, a backend's identity
and a re-scored log's provenance.

metrics.json is a benchmark's own: the envelope is a JSON object (`Metrics`, the default of
every benchmark), and a benchmark whose summary has a fixed shape declares a model of it
(`BenchmarkDefinition.metrics_model`), which checks the summary before the file is written.
Reading checks the envelope only: an earlier version's file keeps the shape it was given.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError

from visioneval.core.engine_options import EngineOptions
from visioneval.core.records import GenerationSettings
from visioneval.shards import Shard
from visioneval.validation import first_error

RUN_FORMAT = 2
"""The layout of run.json and samples.jsonl, written as run.json's `run_format`. Runs from
before the field existed have none and are format 1 (the same run.json, but validator
records held their result as response text); a run written by a newer visioneval (a higher
number) is refused rather than misread. Every earlier format is migrated by `migrate`."""


class _Closed(BaseModel):
    """A block whose keys visioneval writes and knows, all of them: another key is an error."""

    model_config = ConfigDict(extra="forbid")


class _Open(BaseModel):
    """A block that holds keys visioneval does not define (see each subclass for whose)."""

    model_config = ConfigDict(extra="allow")


# -- what was run -------------------------------------------------------------------------


class DatasetStat(_Closed):
    """Each data file's [size, modification time in ns] under `root` (`parquet.file_stat`):
    a reader tells that the data is as it was from a stat per file (`core/datacheck.py`)."""

    root: str
    files: dict[str, list[int]]


class DatasetInfo(_Open):
    """What the run read. Open: a benchmark describes its data in its own terms besides these
    (the evaluators' case count, a re-scored log's data files); visioneval reads these."""

    source: str | None = None
    fingerprint: str | None = None
    stat: DatasetStat | None = None
    files: dict[str, list[str]] | None = None
    rows: dict[str, int] | None = None


class PlannedDataset(DatasetInfo):
    """The dataset block of a plan: where the data is and its fingerprint are required (a
    resume refuses data whose fingerprint changed)."""

    source: str
    fingerprint: str


class VariantInfo(_Closed):
    """A request variant the run sends beside the original (`--variant`): its name (the
    id suffix of its family), its kind and the exact change with the Pillow that made it."""

    name: str
    kind: str
    transform: str
    pillow: str | None = None
    read_by_benchmark: bool = Field(
        False, description="The benchmark's own metrics read this family too (SalBench's "
        "lmms-eval prompt under --prompt both).")


class ProbedResolution(_Open):
    """`visioneval probe resolution`'s estimate of the endpoint's effective resolution,
    measured before the run (`--probe-resolution`). Open: the probe's `ResolutionEstimate`
    as it dumped it (bands, thresholds, intervals); visioneval reads these."""

    status: str
    summary: str
    effective_long_side: float | None = None
    factor: float | None = None


class StoppingInfo(_Closed):
    """`--target-ci`: the stopping rule a run was started with, and how it went. The
    samples were evaluated in a seeded random order and the run stopped sending once the
    anytime-valid interval of its headline proportion was narrow enough (docs/stopping.md)."""

    method: str = Field(description="The confidence sequence: \"betting\" (Waudby-Smith & "
                        "Ramdas 2023, hedged capital).")
    target_ci: float = Field(description="W: the widest interval to stop at, in percentage "
                             "points.")
    level: float = Field(description="The interval's coverage, valid at any stopping time.")
    min_samples: int = Field(description="Samples with an outcome before any stop.")
    seed: int = Field(description="Seed value of the samples' random order.")
    stopped: bool = Field(description="Whether the rule stopped the run before its data "
                          "ran out.")
    stopped_at: int | None = Field(None, description="Outcomes seen when it stopped.")
    n: int = Field(description="Outcomes in the interval: the samples in flight at the stop "
                   "are in it too.")
    samples: int | None = Field(None, description="Samples in the run's data.")
    proportion: str = Field("accuracy", description="What the rule watches, as the "
                            "benchmark names it (`Benchmark.headline_proportion`).")
    estimate: float | None = Field(None, description="That proportion over those n.")
    ci: list[float] = Field(description="The confidence sequence's interval after those n "
                            "(fractions): the one valid under the stopping rule.")
    segments: list[tuple[int, float]] = Field(description="[n, W] from which each --target-ci "
                                        "tuned the bets (a resume with a smaller one adds one).")

    def line(self) -> str:
        """The rule and its interval in one line (terminal and report)."""
        how = (f"stopped at n={self.stopped_at}" if self.stopped and self.stopped_at
               else "did not stop early")
        shown = f"{self.estimate * 100:.1f}%" if self.estimate is not None else "-"
        total = f" of {self.samples}" if self.samples else ""
        return (f"stopping rule: {self.level:.0%} {self.method} confidence sequence, stop once "
                f"at most {self.target_ci:g} points wide (min {self.min_samples} samples, "
                f"seed {self.seed}): {how}; {self.proportion} {shown} "
                f"[{self.ci[0] * 100:.1f}, {self.ci[1] * 100:.1f}] over {self.n}{total} "
                "samples, the interval valid under the stopping rule")


class BenchmarkPlan(_Closed):
    """What `Benchmark.plan()` returns: the benchmark's name, its options (as its options
    model dumps them; `definition.build(options)` rebuilds it) and its data, recorded in
    run.json when a run starts and compared when it resumes."""

    benchmark: str
    options: dict[str, Any]
    dataset: PlannedDataset
    variants: list[VariantInfo] | None = None
    epochs: int | None = None
    score: Literal["expected"] | None = None

    @classmethod
    def of(cls, plan: BenchmarkPlan | Mapping[str, Any], name: str = "") -> BenchmarkPlan:
        """A benchmark's plan, checked; a benchmark of your own may return it as a dict. A
        plan that is not one is a ValueError of one line naming the benchmark and field."""
        if isinstance(plan, BenchmarkPlan):
            return plan
        try:
            return cls.model_validate(plan)
        except ValidationError as exc:
            raise ValueError(f"benchmark {name or '?'}: plan() {first_error(exc)}") from None

    def dataset_info(self) -> DatasetInfo:
        """The dataset block as run.json keeps it."""
        return DatasetInfo.model_validate(self.dataset.model_dump(exclude_unset=True))


# -- on what ------------------------------------------------------------------------------


class Identity(RootModel[dict[str, Any]]):
    """What identifies a model's answers, as its backend describes them (the response cache's
    key), kept as the backend made it. Open: each backend says what tells its answers apart
    (`backend`, `model`, and `served`, what the server says it serves, or its `base_url`;
    the builtin baselines add their rules' version)."""

    @property
    def served(self) -> dict[str, Any] | None:
        value = self.root.get("served")
        return value if isinstance(value, dict) else None

    def as_dict(self) -> dict[str, Any]:
        """As the backend made it (`served.describe` reads this)."""
        return dict(self.root)


class BackendInfo(_Closed):
    """The model the run asks (`backends.registry.recorded`): never a key, only where it was
    read from; URLs with their credentials masked. `kind` "rescored": answers read from
    another tool's log (`tool`), no model asked."""

    kind: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    base_urls: list[str] = []
    key_env_used: str | None = None
    base_url_credentials: bool = False
    identity: Identity | None = None
    tool: str | None = None

    def urls(self) -> list[str]:
        """The URLs recorded (credentials masked), without a trailing slash."""
        urls = self.base_urls or ([self.base_url] if self.base_url else [])
        return [str(u).rstrip("/") for u in urls]


class GenerationInfo(_Closed):
    """The generation settings (`GenerationSettings`); a re-scored run records what the
    other tool's log says, None where it left the setting to the model."""

    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    top_logprobs: int | None = None

    def settings(self) -> GenerationSettings:
        """The settings a resume continues with; ValueError when one is not recorded."""
        try:
            return GenerationSettings.model_validate(
                self.model_dump(exclude_unset=True, exclude_none=True))
        except ValidationError as exc:
            raise ValueError(f"run.json: generation {first_error(exc)}") from None


class Pricing(_Closed):
    """The prices the user gave (US dollars per million tokens in and out): the model's
    (`--price-in`/`--price-out`) and its judge's (`--judge-price-in`/`--judge-price-out`)."""

    price_in: float | None = None
    price_out: float | None = None
    judge_price_in: float | None = None
    judge_price_out: float | None = None


BatchStatus = Literal["submitting", "submitted", "collected", "failed", "lost"]
"""Where a batch is (`engine.batch_ledger`): a word outside these is refused when run.json
is read, as when a status is set."""


class BatchEntry(_Closed):
    """One batch sent to the provider's batch API (`--batch`). Recorded before it is created
    (`id` None, status "submitting"), so a process that ends in between leaves a trace a
    resume resolves; the samples it holds are in `batches/<key>.ids` of the run."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    key: str = Field(description="visioneval's name for it: its ids file, its label.")
    id: str | None = Field(None, description="The provider's batch id, once created.")
    provider: str
    submitted_at: str = Field(description="UTC, ISO 8601: when it was sent.")
    requests: int
    status: BatchStatus = Field(
        description="submitting, submitted, collected (its answers are in the journal), "
        "failed (it could not be created) or lost (never created).")


class BatchRun(_Closed):
    """A run sent through the provider's batch API (`--batch`): its batches, and the
    discount its model's tokens are priced at."""

    provider: str
    discount: float = Field(description="A batch token's price against a request sent "
                            "alone (0.5: half).")
    batches: list[BatchEntry] = []


# -- each session -------------------------------------------------------------------------


class SkippedRowInfo(_Closed):
    """A row of the data that could not become a sample, and why."""

    group: str
    row: str
    reason: str


class UsageCountInfo(_Closed):
    """Requests and tokens of one role and group (`cost.usage.UsageCount`)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reported: int = 0
    unreported_prompt_tokens: int = 0
    unreported_completion_tokens: int = 0
    without_usage: int = 0
    reported_usd: float = 0.0


class EndpointStats(_Closed):
    """One endpoint's requests in a session of several `--base-url`s; the mean latency is
    None when it answered nothing (never 0)."""

    requests: int = 0
    errors: int = 0
    latency_s_mean: float | None = None
    taken_out: int = 0


class DispatchStats(_Closed):
    """How the dispatcher limited a session: in flight at most, the lowest after HTTP 429s,
    and the time waited for --rpm/--tpm."""

    concurrency_per_endpoint: int | None = None
    concurrency_ceiling: int | None = None
    concurrency_lowest: int | None = None
    concurrency_end: int | None = None
    http_429: int = 0
    rate_limit_wait_s: float | None = None


class SessionCounts(_Closed):
    """What the engine counts in a session: `engine.runner.RunStats` is this model, counted
    live, and writes it into the session's end."""

    resumed: int = 0
    sent: int = 0
    cache_hits: int = 0
    finished: int = 0
    errors: int = 0
    skipped: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    judge_requests: int = 0


class _SessionHead(_Closed):
    """A session's first keys: when and where it ran, on what, and how it ended. A class of
    its own so that `SessionInfo` keeps its keys in their place: pydantic lays out the
    fields of a base class first (this one's, then `SessionCounts`')."""

    started_at: str | None = None
    resumed_from: int | None = Field(None, description="Samples done before it started.")
    host: str | None = Field(None, description="The machine that ran it.")
    pid: int | None = None
    model_identity: Identity | None = Field(
        None, description="The model as its server described it (the cache's key).")
    judge_identity: Identity | None = None
    panel_identities: list[Identity] | None = Field(
        None, description="The benchmark's panel models as their servers described them, "
        "in order (panel1 first).")
    engine_changes: dict[str, list[Any]] | None = Field(
        None, description="The recorded engine settings this resume replaced: setting: "
        "[recorded, now].")
    rescored_from: str | None = Field(None, description="The tool whose log it read.")
    ended_at: str | None = None
    seconds: float | None = None
    cpu_seconds: float | None = None
    status: str | None = Field(
        None, description="finished, interrupted, stopped, or killed (it never wrote its "
        "end).")


class SessionInfo(SessionCounts, _SessionHead):
    """One session of the run: a start, a resume, a re-scoring or (merged) a shard's. The
    counters are written when the session ends; a session without `status` ended without
    writing its end (killed)."""

    skipped_rows: list[SkippedRowInfo] = []
    error_reasons: dict[str, int] = {}
    cache_sources: dict[str, int] = Field(
        {}, description="Run directory: the cached answers it stored that this session used.")
    usage: dict[str, dict[str, UsageCountInfo]] | None = Field(
        None, description="Requests and tokens by role (model, judge, panel1, ...) and "
        "group: the cost.")
    endpoints: dict[str, EndpointStats] | None = Field(
        None, description="Per URL, with several --base-url.")
    dispatch: DispatchStats | None = None
    max_cost_usd: float | None = Field(None, description="--max-cost of this session.")
    spent_usd: float | None = None
    shard: int | None = Field(None, description="A merged run's: the shard it came from.")

    def update(self, values: Mapping[str, Any]) -> None:
        """Set `values` (validated) on this session, in place: the session is already in
        its run's list."""
        given = type(self).model_validate(values)
        for name in given.model_fields_set:
            setattr(self, name, getattr(given, name))


# -- at the end ---------------------------------------------------------------------------


class CostInfo(_Closed):
    """counts.cost (`cost.total.run_cost`): dollars over every session, or None with the
    reason (`unavailable`), never 0 for unknown; and per group."""

    usd: float | None = None
    source: str | None = None
    unavailable: str | None = None
    groups: dict[str, float | None] | None = None


class Counts(_Closed):
    """The run's counts as its last end saw them (every session added up)."""

    records: int = 0
    scored: int = 0
    errors: int = 0
    skipped_rows: int = 0
    cache_hits: int = 0
    requests_sent: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    answers_with_reasoning: int = 0
    cost: CostInfo | None = None
    not_in_data: int = 0


class LogFileInfo(_Closed):
    """One file of another tool's log a re-scored run read, and what was in it."""

    path: str
    task: str
    lines: int | None = None
    bad_lines: int | None = None
    sha256: str | None = None


class RescoredFrom(_Open):
    """Where a re-scored run's answers came from. Open: what the other tool recorded about
    its run (version, commit, date, results files) and the log reader's checks are the
    reader's own."""

    tool: str
    requests_sent: int = 0
    answers: str | None = None
    files: list[LogFileInfo] = []
    bad_lines: int | None = None


class MergedShard(_Closed):
    """A shard a merged run was made of."""

    directory: str
    shard: Shard
    status: str | None = None
    backend: BackendInfo | None = None
    records: int | None = None


class MissingShard(_Closed):
    """A shard a partial merge went without (`still_running`: it was running then)."""

    index: int
    count: int
    still_running: bool = False


class RunInfo(_Closed):
    """run.json: what was run, on what, every session and the counts at the last end. A key
    is in the file when the run has it (a shard, a definition of your own, counts once a
    session ended); read and written again, a file keeps the keys it had."""

    run_format: int = Field(RUN_FORMAT, description="The layout of the run directory.")
    visioneval_version: str | None = Field(None, description="The version that started it.")
    benchmark: str = Field(description="The benchmark's name.")
    definition: str | None = Field(
        None, description="module:attribute of a definition that is not registered (yours, "
        "or the one that rebuilds a re-scored run).")
    shard: Shard | None = Field(None, description="The part of the samples a shard run "
                                "holds (`--shard K/N`).")
    options: dict[str, Any] = Field(
        {}, description="The benchmark's options as its options model dumped them; that "
        "model validates them (`definition.build`), so they stay a mapping here.")
    dataset: DatasetInfo = Field(DatasetInfo(), description="What the run read.")
    backend: BackendInfo = Field(description="The model the run asks.")
    generation: GenerationInfo = Field(GenerationInfo(), description="Sampling settings.")
    engine: EngineOptions | None = Field(
        None, description="Every engine setting in force (`EngineOptions`): a resume keeps "
        "them unless a flag is given again.")
    variants: list[VariantInfo] | None = Field(
        None, description="The request variants sent beside every sample (`--variant`): "
        "each a family of its own on the same rows.")
    epochs: int | None = Field(
        None, ge=2, description="`--epochs K`: every sample asked K times (answer k as "
        "`<id>@epoch<k>`, with its own seed); absent: once.")
    score: Literal["expected"] | None = Field(
        None, description="`--score expected`: each answer's expected outcome from its first "
        "token's log-probabilities beside the sampled one (epochs.json); absent: sampled.")
    resolution_probe: ProbedResolution | None = Field(
        None, description="The endpoint's effective resolution, measured before the run "
        "(`--probe-resolution`).")
    pricing: Pricing | None = Field(None, description="--price-in/--price-out and "
                                    "--judge-price-in/--judge-price-out, when given.")
    batch: BatchRun | None = Field(
        None, description="`--batch`: the batches sent and the batch price's discount.")
    stopping: StoppingInfo | None = Field(
        None, description="`--target-ci`: the stopping rule, where it stopped, its interval.")
    python: str | None = Field(None, description="The Python version that started it.")
    started_at: str | None = Field(None, description="UTC, ISO 8601.")
    status: str | None = Field(
        None, description="running, finished, interrupted, stopped (--max-cost), partial or "
        "merging (a merge).")
    sessions: list[SessionInfo] = Field([], description="Every session, in order.")
    rescored_from: RescoredFrom | None = Field(
        None, description="A re-scored run's source: another tool's logs.")
    merged_from: list[MergedShard] | None = Field(
        None, description="A merged run's shards.")
    missing_shards: list[MissingShard] | None = Field(
        None, description="Shards a partial merge went without.")
    finished_at: str | None = Field(None, description="When the last session ended.")
    counts: Counts | None = Field(None, description="Every session added up, at the end.")
    not_in_data: list[str] | None = Field(
        None, description="Journal records of samples not in the run's data, left out of "
        "the metrics and of every reader.")
    merged_at: str | None = Field(None, description="When a merge wrote the run.")

    def model_post_init(self, context: Any, /) -> None:
        # Always in the file: its format, and the sessions list a session appends to.
        self.__pydantic_fields_set__.update({"run_format", "sessions"})

    def record_engine(self, engine: EngineOptions) -> None:
        """Record the engine settings in force, every one of them (a resume takes what is
        recorded), not only those given: a file read keeps the ones it had."""
        self.engine = EngineOptions.model_validate(engine.model_dump())

    def forget(self, name: str) -> None:
        """Leave the key `name` out of the file again (its value back to the default)."""
        setattr(self, name, type(self).model_fields[name].get_default(call_default_factory=True))
        self.__pydantic_fields_set__.discard(name)

    @property
    def model(self) -> str:
        return self.backend.model

    def to_json(self) -> bytes:
        """The file's bytes: indented JSON of the keys read or set."""
        return orjson.dumps(self.model_dump(mode="json", exclude_unset=True, by_alias=True),
                            option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n"


# -- metrics.json -------------------------------------------------------------------------


class Metrics(RootModel[dict[str, Any]]):
    """metrics.json's envelope: a JSON object whose keys are the benchmark's (its
    `summarize` output). What a benchmark that declares no model of its own is checked
    against; a user's own benchmark needs nothing more."""


class MetricsBlock(BaseModel):
    """A block of a benchmark's metrics model: its keys are all known (another is an error
    naming it). A figure that could not be computed is absent and `unavailable` (or
    `<figure>_unavailable`) says why, so every figure is optional."""

    model_config = ConfigDict(extra="forbid")


Interval = tuple[float, float]
"""A 95% interval [low, high] (`stats.bootstrap`)."""


MetricsModel = type[BaseModel]
"""A benchmark's model of its metrics.json (`BenchmarkDefinition.metrics_model`)."""


def check_metrics(metrics: Any, model: MetricsModel = Metrics) -> dict[str, Any]:
    """`metrics` if it is what `model` describes (validated, not converted: the file keeps
    the benchmark's own mapping); a ValueError naming the field otherwise."""
    if not isinstance(metrics, dict):
        raise ValueError(f"not a JSON object but {type(metrics).__name__}")
    # The model's instances are all new and live until the check ends: the cyclic GC would
    # walk them again at every collection (ten times the time for a summary of 100,000
    # cases, measure/metrics_check_cost.py). They hold no cycles, so nothing is kept.
    collecting = gc.isenabled()
    gc.disable()
    try:
        model.model_validate(metrics)
    except ValidationError as exc:
        raise ValueError(first_error(exc)) from None
    finally:
        if collecting:
            gc.enable()
    return metrics


# -- reading and migrating ----------------------------------------------------------------


def run_format(data: Mapping[str, Any]) -> int:
    """The format a run.json (as read, before migration) was written in: 1 when it does not
    say; 0 when what it says is not a format number."""
    value = data.get("run_format", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _from_1(data: dict[str, Any]) -> dict[str, Any]:
    """Format 1 to 2. run.json's keys are the same (what changed is that validator records
    hold their result in `parsed`; the evaluators' reader still reads the older records).
    A run of that time may record one URL without the list of URLs that came with several
    endpoints."""
    backend = data.get("backend")
    if isinstance(backend, dict) and "base_urls" not in backend:
        url = backend.get("base_url")
        data = data | {"backend": backend | {"base_urls": [url] if url else []}}
    return data | {"run_format": 2}


MIGRATIONS: tuple[Callable[[dict[str, Any]], dict[str, Any]], ...] = (_from_1,)
"""MIGRATIONS[n - 1] turns run.json of format n into format n + 1; the chain ends at
RUN_FORMAT. A new format adds its step here and nowhere else."""

assert len(MIGRATIONS) == RUN_FORMAT - 1


class RunFileError(ValueError):
    """run.json cannot be read as a run: the message is one line naming what is wrong."""


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """run.json of any format this visioneval reads, as the current format."""
    found = run_format(data)
    if not 1 <= found <= RUN_FORMAT:
        raise RunFileError(f"run_format {data.get('run_format')!r} is not one this visioneval "
                           f"reads (1 to {RUN_FORMAT}); upgrade visioneval")
    for step in MIGRATIONS[found - 1:]:
        data = step(data)
    return data


def parse_run_info(raw: bytes) -> tuple[RunInfo, int]:
    """(run.json as a RunInfo of the current format, the format it was written in); a
    RunFileError of one line when it is not a run's description."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise RunFileError(f"not valid JSON ({exc})") from None
    return run_info_from(data)


def run_info_from(data: Any) -> tuple[RunInfo, int]:
    """`parse_run_info` of JSON already read."""
    if not isinstance(data, dict):
        raise RunFileError("not a run description (a JSON object)")
    written = run_format(data)
    try:
        return RunInfo.model_validate(migrate(data)), written
    except ValidationError as exc:
        raise RunFileError(first_error(exc)) from None
