"""One evaluation session, start to end: preflight, run directory, engine, metrics, tables.

Shared by every benchmark command; a benchmark only supplies samples, scoring and tables.
"""

from __future__ import annotations

import datetime as dt
import gc
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from visioneval.backends.base import Backend
from visioneval.backends.registry import BackendSpec, recorded
from visioneval.backends.replicas import Replicas
from visioneval.core import registry
from visioneval.core.benchmark import Benchmark
from visioneval.core.capabilities import LearnsFromAnswers
from visioneval.core.epoch_ids import EPOCH_OF
from visioneval.core.idset import IdCollector, IdSet
from visioneval.core.records import GenerationSettings, Record, Sample, SkippedRow, stable_hash
from visioneval.core.runfiles import (
    RUN_FORMAT,
    BackendInfo,
    BenchmarkPlan,
    CostInfo,
    Counts,
    GenerationInfo,
    Metrics,
    MetricsModel,
    Pricing,
    RunInfo,
    SessionInfo,
)
from visioneval.core.store import SAMPLES_FILE, RunDirError, RunStore, WriteError
from visioneval.core.variant_ids import VARIANT_OF
from visioneval.core.version import installed_version
from visioneval.cost.prices import ModelRef, NoPrice, recorded_judge_price, recorded_price
from visioneval.cost.total import role_prices, run_cost
from visioneval.engine.cache import open_or_none
from visioneval.engine.options import EngineOptions, retry_policy
from visioneval.engine.order import seeded_order
from visioneval.engine.progress import RunProgress
from visioneval.engine.runner import CostLimitReached, Engine, RecordWatch, RunStats
from visioneval.epochs.family import Repeated
from visioneval.epochs.summary import FILE as EPOCHS_FILE
from visioneval.runs.live_summary import LiveSummary, RecordReader, Summary, summary_of
from visioneval.runs.output import Output
from visioneval.shards import Shard
from visioneval.variants.family import Varied
from visioneval.variants.summary import FILE as VARIANTS_FILE

if TYPE_CHECKING:
    from visioneval.cost.budget import Budget
    from visioneval.engine.batch_runner import BatchSetup
    from visioneval.engine.stopping import SequentialStop
    from visioneval.epochs.summary import EpochsSummary
    from visioneval.variants.summary import VariantsSummary

log = logging.getLogger(__name__)


@dataclass
class SessionResult:
    directory: Path
    metrics: dict[str, Any]
    stats: RunStats
    n_records: int
    n_errors: int
    status: str
    variants: VariantsSummary | None = None
    epochs: EpochsSummary | None = None
    thumbnails: Mapping[str, str | bytes] = field(default_factory=dict)
    """For its page, prepared while it ran, by image sha256: thumbnails made (data URLs),
    and encoded images to make them from if the page shows them (`report.early`)."""
    page_rows: Any = None
    """For its page, its sample browser's rows read while it ran (`report.browser_rows`),
    when they are every record's; None: the page reads the journal for them."""


def default_run_dir(benchmark: str, model: str, root: Path = Path("results")) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "model"
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return root / f"{benchmark}-{safe}-{stamp}"


def run_dir_for(out: Path | None, benchmark: str, model: str, shard: Shard | None = None,
                on_ray: bool = False) -> Path:
    """Where a new run goes: `out`, else results/<benchmark>-<model>-<time>, a shard's with
    its shard in the name; absolute on Ray, whose tasks run elsewhere."""
    directory = out or default_run_dir(benchmark, model)
    if shard is not None and out is None:
        directory = directory.with_name(f"{directory.name}-shard-{shard.dirname}")
    return directory.absolute() if on_ray else directory


def new_run_info(plan: BenchmarkPlan, spec: BackendSpec, settings: GenerationSettings,
                 engine: EngineOptions, definition: str | None = None,
                 shard: Shard | None = None) -> RunInfo:
    """run.json at the start. `definition`: where a benchmark that is not registered was
    loaded from (module:attribute), so resume, report and compare can load it again;
    `shard`: the part of the samples this run holds (None: all of them)."""
    info = RunInfo(run_format=RUN_FORMAT, visioneval_version=installed_version(),
                   benchmark=plan.benchmark, options=plan.options,
                   dataset=plan.dataset_info(),
                   # api_key_env is what the user chose (None: the default); key_env_used is
                   # where the key was read from. The key itself is never written anywhere.
                   backend=BackendInfo.model_validate(recorded(spec)),
                   generation=GenerationInfo.model_validate(settings.model_dump()))
    info.record_engine(engine)
    if plan.variants:
        info.variants = plan.variants
    if plan.epochs:
        info.epochs = plan.epochs
    if plan.score:
        info.score = plan.score
    if definition:
        info.definition = definition
    if shard:
        info.shard = shard
    if (pricing := engine.pricing()) is not None:
        info.pricing = Pricing.model_validate(pricing)
    info.python = sys.version.split()[0]
    info.started_at = _now()
    info.status = "running"
    return info


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def nothing_to_evaluate(benchmark: Benchmark) -> str:
    """The one line for a selection without rows, naming what was asked for and where."""
    plan = planned(benchmark)
    rows = plan.dataset.rows or {}
    what = (f"{', '.join(rows)} {'has' if len(rows) == 1 else 'have'} 0 rows" if rows
            else "has no samples")
    return f"nothing to evaluate: {plan.benchmark} {what} in {plan.dataset.source}"


def planned(benchmark: Benchmark) -> BenchmarkPlan:
    """The benchmark's plan, checked (`BenchmarkPlan.of`: a benchmark of your own may give
    a dict). It reads the data to fingerprint it: every file."""
    return BenchmarkPlan.of(benchmark.plan(), benchmark.name)


def check_resumable(info: RunInfo, plan: BenchmarkPlan) -> None:
    """A resumed run must read the same data, or its records would mix two datasets, and
    send the same request variants, or its families would not be the ones it recorded."""
    before, now = str(info.dataset.fingerprint), plan.dataset.fingerprint
    if before != now:
        raise RunDirError(f"the dataset changed since this run started (fingerprint {before[:12]} "
                          f"then, {now[:12]} now); start a new run instead of resuming")
    then = [v.name for v in info.variants or []]
    asked = [v.name for v in plan.variants or []]
    if then != asked:
        raise RunDirError(f"this run was started with variants {', '.join(then) or 'none'}, "
                          f"now {', '.join(asked) or 'none'}; start a new run for other "
                          "variants")
    if info.score != plan.score:
        raise RunDirError(f"this run was started with --score {info.score or 'sampled'}, now "
                          f"{plan.score or 'sampled'}; start a new run")
    if (info.epochs or 1) != (plan.epochs or 1):
        raise RunDirError(f"this run was started with --epochs {info.epochs or 1}, now "
                          f"{plan.epochs or 1}; start a new run (its cache entries give it "
                          "the answers already paid for)")


@dataclass(frozen=True)
class Models:
    """The model a session asks, and its benchmark's judge and panel models: opened and
    checked by the caller."""

    backend: Backend
    judge: Backend | None = None
    panel: tuple[Backend, ...] = ()


@dataclass(frozen=True)
class SessionPlan:
    """How a session runs, as the caller decided it. `budget`: --max-cost, after which no
    request is sent (CostLimitReached, status "stopped"); `engine_changes`: the recorded
    engine settings a resume replaced (setting: [then, now]), kept in this session's entry
    of run.json; `batch`: send the samples through the provider's batch API
    (`visioneval.engine.batch_runner`); `stopping`: --target-ci's rule (the samples then run
    in its seeded order, run.json records how it went); `on_record`: told of each record as
    it is journaled (the request-by-request path only); `readers`: told of each record the
    first reading of a new run's metrics reads (`RecordReader`)."""

    settings: GenerationSettings
    engine: EngineOptions
    budget: Budget | None = None
    engine_changes: dict[str, list[Any]] | None = None
    batch: BatchSetup | None = None
    stopping: SequentialStop | None = None
    on_record: RecordWatch | None = None
    readers: Sequence[RecordReader] = ()


async def run_session(benchmark: Benchmark, models: Models, store: RunStore,
                      plan: SessionPlan, output: Output) -> SessionResult:
    """Run what is not yet done, then recompute metrics and tables from the journal. A new
    run's metrics are read from its journal while its answers arrive
    (`visioneval.runs.live_summary`), a resumed run's at its end. The progress goes to
    `output.err` (or the display `output.board` shares with other runs, as `output.label`)."""
    backend, judge, panel = models.backend, models.judge, models.panel
    settings, engine_options, budget = plan.settings, plan.engine, plan.budget
    engine_changes, batch, stopping = plan.engine_changes, plan.batch, plan.stopping
    on_record, readers = plan.on_record, plan.readers
    console, show_progress, board, label = output.err, output.progress, output.board, \
        output.label
    # numpy: loaded when a session starts

    journal = store.directory / SAMPLES_FILE
    live = LiveSummary(benchmark, journal, readers) if batch is None and (
        not journal.exists() or journal.stat().st_size == 0) else None
    if live is not None:
        on_record = live.watching(on_record)
    answered = _answered(store, benchmark) if stopping is None else \
        _remembered(store, benchmark, stopping)
    done = IdSet(r.id for r in answered)
    if isinstance(benchmark, Varied | Repeated):
        benchmark.skip_answered(done)
    cache = open_or_none(engine_options.cache_path)
    replicas = backend if isinstance(backend, Replicas) else None
    # Enough workers to fill every endpoint; the dispatcher holds each to its share.
    workers = replicas.capacity if replicas else engine_options.concurrency
    engine = Engine(backend, store, settings, retry_policy(engine_options), workers, cache,
                    judge=judge, panel=tuple(panel), budget=budget,
                    read_cache=not engine_options.refresh_cache)
    for earlier in store.info.sessions:
        if earlier.status is None:
            earlier.status = "killed"  # it ended without writing its own end
    # The host and process: which machine ran (or is running) a shard of a distributed run;
    # the model (and judge, and panel) as the server described it, which keys the cache.
    session = SessionInfo.model_validate({
        "started_at": _now(), "resumed_from": len(done), "host": os.uname().nodename,
        "pid": os.getpid(), "model_identity": backend.identity(),
        **({"judge_identity": judge.identity()} if judge else {}),
        **({"panel_identities": [m.identity() for m in panel]} if panel else {}),
        **({"engine_changes": engine_changes} if engine_changes else {})})
    if stopping is not None:  # in run.json from the start: a killed run resumes with it
        store.info.stopping = stopping.info()
    store.info.status = "running"
    store.info.sessions.append(session)
    store.save_info()
    # Everything imported so far lives for the whole run: keep it out of the cyclic GC's
    # full collections, which would otherwise walk ~10^5 long-lived objects every time.
    gc.freeze()
    started, cpu_started = time.perf_counter(), time.process_time()
    status = "interrupted"
    stats = RunStats()
    in_data = IdCollector()
    shard = store.info.shard
    total = benchmark.total() if shard is None else -(-benchmark.total() // shard.count)
    backend.expect(total, len(done))
    try:
        name = label or benchmark.name
        with RunProgress(total, name + (f" {shard.label}" if shard else ""),
                         completed=len(done), console=console, enabled=show_progress,
                         board=board) as progress:
            if replicas:
                progress.watch_dispatch(replicas)
            if stopping is not None:  # never with a shard (refused)

                samples = seeded_order(benchmark.samples, stopping.rule.seed)
            elif backend.asks_a_person:  # a person must not see the levels in their cycle
                samples = seeded_order(
                    lambda: benchmark.samples() if shard is None else
                    in_shard(benchmark.samples(), shard, progress), person_seed(backend.model))
            else:
                samples = benchmark.samples() if shard is None else \
                    in_shard(benchmark.samples(), shard, progress)
            samples = in_data.watch(samples, _sample_id)
            if batch is not None:
                await batch.run(engine, samples, benchmark.score, progress, done, stats)
            else:
                await engine.run(samples, benchmark.score, progress, done, stats,
                                 benchmark.solve, stopping, on_record)
        status = "finished"
    except CostLimitReached:
        status = "stopped"
        raise
    finally:
        pending = sys.exc_info()[1]  # the error this session is ending on, if any
        store.close()
        if cache:
            cache.close()
        end: dict[str, Any] = {
            "ended_at": _now(), "seconds": round(time.perf_counter() - started, 3),
            "cpu_seconds": round(time.process_time() - cpu_started, 3), "status": status,
            **stats.as_dict()}
        if replicas:
            end |= {"endpoints": replicas.endpoint_stats(),
                    "dispatch": replicas.dispatch_stats()}
        if budget is not None:
            end |= {"max_cost_usd": float(budget.limit), "spent_usd": float(budget.spent)}
        session.update(end)
        if stopping is not None:
            store.info.stopping = stopping.info(total)
        try:
            result = finish(benchmark, store, status, stats, in_data.ids(), live=live)
        except WriteError as late:
            if pending is None:
                raise
            # The session is already ending on an error (often the same full disk): that
            # one is said; the metrics keep their last written state.
            log.warning("%s", late)
        finally:
            if live is not None:
                live.abandon()
    return result


def _answered(store: RunStore, benchmark: Benchmark,
              failed: Callable[[str], None] | None = None) -> Iterator[Record]:
    """The run's answered records (latest per sample), streamed once; a benchmark that
    chooses its requests from the answers so far (`LearnsFromAnswers`) learns each;
    `failed` is told each sample whose latest request failed."""
    learner = benchmark if isinstance(benchmark, LearnsFromAnswers) else None
    for record in store.iter_latest():
        if record.ok:
            if learner is not None:
                learner.learn(record)
            yield record
        elif failed is not None:
            failed(record.id)


def _remembered(store: RunStore, benchmark: Benchmark, stopping: SequentialStop
                ) -> Iterator[Record]:
    """The answered records (`_answered`), each told to the stopping rule, fed again when
    its position comes; the samples whose last request failed are told too (sent again)."""
    for record in _answered(store, benchmark, stopping.remember_failed):
        stopping.remember(record)
        yield record


def _sample_id(item: Sample | SkippedRow) -> str | None:
    return item.id if isinstance(item, Sample) else None


def in_shard(items: Iterable[Sample | SkippedRow], shard: Shard,
             progress: RunProgress) -> Iterator[Sample | SkippedRow]:
    """The samples (and skipped rows, keyed by part and row) that fall in `shard`; the
    progress bar's estimate (total / N) becomes the real count once the data is read."""
    n = 0
    for item in items:
        if shard.holds(shard_key(item)):
            n += item.samples if isinstance(item, SkippedRow) else 1
            yield item
    progress.set_total(n)


def shard_key(item: Sample | SkippedRow) -> str:
    """What decides an item's shard: a sample's id (a variant's or a repeated answer's: its
    original's, so a row's families and answers land in one shard and pair there); a skipped
    row's part and row."""
    if isinstance(item, Sample):
        meta = item.metadata
        return str(meta.get(VARIANT_OF) or meta.get(EPOCH_OF) or item.id)
    return f"skipped\0{item.group}\0{item.row}"


def finish(benchmark: Benchmark, store: RunStore, status: str, stats: RunStats,
           data_ids: IdSet | None = None, metrics_model: MetricsModel | None = None,
           live: LiveSummary | None = None) -> SessionResult:
    """Metrics and tables from every record so far; run.json updated with the counts.
    `data_ids`: the ids of the samples in the run's data, when the session read all of it;
    a journal record of any other id is named and left out (else the ids found so at an
    earlier end stay out). `metrics_model`: the benchmark's model of its metrics.json
    (default: its definition's, `metrics_model_for`). `live`: the summary read while the
    session's answers arrived, used if the session finished with the data read to its end
    and it is certainly the one the journal gives (`LiveSummary.result`); else, or without
    it, the journal is streamed once now."""
    outside = NotInData(store, data_ids)
    summary: Summary | None = None
    if live is not None:
        if status == "finished" and data_ids is not None:
            summary = live.result(data_ids)
        live.abandon()
    if summary is None:
        summary = summary_of(benchmark, outside.leave_out(store.iter_latest()))
    metrics, variants, tally = summary.metrics, summary.variants, summary.tally
    outside.record()
    store.write_metrics(metrics, metrics_model or metrics_model_for(store.info))
    if variants is not None:
        store.write_json(VARIANTS_FILE, variants.model_dump(mode="json", exclude_none=True))
    if summary.epochs is not None:
        store.write_json(EPOCHS_FILE, summary.epochs.model_dump(mode="json", exclude_none=True))
    benchmark.write_tables(metrics, store.info, store.directory)
    n_records, n_errors = tally.records, tally.errors
    sessions = store.info.sessions
    store.info.status = status
    store.info.finished_at = _now()
    counts = Counts(records=n_records, scored=n_records - n_errors, errors=n_errors,
                    skipped_rows=skipped_rows(sessions),
                    cache_hits=sum(s.cache_hits for s in sessions),
                    requests_sent=sum(s.sent for s in sessions),
                    prompt_tokens=sum(s.prompt_tokens for s in sessions),
                    completion_tokens=sum(s.completion_tokens for s in sessions),
                    answers_with_reasoning=tally.reasoning,
                    cost=cost_counts(benchmark, store.info))
    if outside.ids:
        counts.not_in_data = len(outside.ids)
    store.info.counts = counts
    store.save_info()
    return SessionResult(store.directory, metrics, stats, n_records, n_errors, status,
                         variants, epochs=summary.epochs)


def metrics_model_for(info: RunInfo) -> MetricsModel:
    """The model of metrics.json that the run's benchmark declares
    (`BenchmarkDefinition.metrics_model`): its registered or visioneval's own definition, or
    the user's own that this process has already imported (it has just run it); else the
    open envelope. Nothing is imported that the run names."""
    try:
        return registry.for_run(info).metrics_model
    except registry.UntrustedRun:
        found = registry.imported_here(info)
        return found.metrics_model if found is not None else Metrics


def cost_counts(benchmark: Benchmark, info: RunInfo) -> CostInfo:
    """counts.cost: every session's usage, priced (see `visioneval.cost.total`)."""
    judge = ModelRef.from_spec(benchmark.judge) \
        if benchmark is not None and benchmark.judge is not None else None
    panel = [ModelRef.from_spec(spec) for spec in benchmark.panel] if benchmark else []
    discount = Decimal(str(info.batch.discount)) if info.batch is not None else None
    return CostInfo.model_validate(run_cost(info.sessions, ModelRef.from_recorded(info.backend),
                                            judge, recorded_price(info.pricing), panel,
                                            batch_discount=discount,
                                            judge_given=recorded_judge_price(info.pricing)))


def price_remedies(info: RunInfo, benchmark: Benchmark | None = None) -> list[str]:
    """How to price what the run could not (said once, after its cost line): the model's
    --price-in/--price-out, the judge's --judge-price-in/--judge-price-out (the judges are
    the benchmark's, when it is given)."""
    judge = ModelRef.from_spec(benchmark.judge) \
        if benchmark is not None and benchmark.judge is not None else None
    panel = [ModelRef.from_spec(spec) for spec in benchmark.panel] if benchmark else []
    prices = role_prices(ModelRef.from_recorded(info.backend), judge,
                         recorded_price(info.pricing), panel,
                         recorded_judge_price(info.pricing))
    if judge is None:
        prices.pop("judge")
    return list(dict.fromkeys(p.remedy for p in prices.values()
                              if isinstance(p, NoPrice) and p.remedy))


def skipped_rows(sessions: list[SessionInfo]) -> int:
    """Rows skipped, as the last session of each shard counted them (every session reads
    all its rows again; a merged run's sessions carry the shard they came from)."""
    last: dict[int | None, int] = {}
    for session in sessions:
        last[session.shard] = session.skipped
    return sum(last.values())


NAMED_AT_MOST = 5
"""Records of samples not in the data that are named one line each (the rest are counted)."""


class NotInData:
    """Journal records whose sample is not in the run's data (a line added by hand, a
    journal copied from another run): they are named, left out of the metrics, and listed
    in run.json's `not_in_data` so that every reader of the run leaves them out too."""

    def __init__(self, store: RunStore, data_ids: IdSet | None):
        self._store = store
        self._data_ids = data_ids
        self._before = set(store.info.not_in_data or ())
        self.ids: set[str] = set() if data_ids is not None else set(self._before)

    def leave_out(self, records: Iterable[Record]) -> Iterator[Record]:
        data_ids, ids = self._data_ids, self.ids
        for record in records:
            if data_ids is not None and record.id not in data_ids:
                ids.add(record.id)
                if len(ids) <= NAMED_AT_MOST and record.id not in self._before:
                    log.warning("%s holds a record of sample %r, which is not in this run's "
                                "data; it is left out of the metrics",
                                self._store.directory / "samples.jsonl", record.id)
            elif record.id in ids:
                continue
            else:
                yield record

    def record(self) -> None:
        """Keep the list in run.json (sorted: the same journal gives the same file)."""
        if len(self.ids) > NAMED_AT_MOST:
            log.warning("%s: %d records in all are of samples not in this run's data; left "
                        "out of the metrics (run.json lists them under not_in_data)",
                        self._store.directory / "samples.jsonl", len(self.ids))
        if self.ids:
            self._store.info.not_in_data = sorted(self.ids)
        else:
            self._store.info.forget("not_in_data")


def person_seed(observer: str) -> int:
    """A person's trial order's random seed: each observer's own, the same in every resume."""
    return int(stable_hash(["person order", observer])[:15], 16)
