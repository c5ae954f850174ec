"""Carrying out a run's spec (`execute`): preflight, the run directory (new or continued,
locked, the same data and model checked), the --max-cost budget, then the engine's
session. The commands add their printing and exit codes around it; the Python API, suites
and Ray's shard tasks call it as it is."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from visioneval.backends.base import Backend
from visioneval.backends.builtin import check_fits
from visioneval.backends.registry import BackendSpec, make_backend
from visioneval.backends.served import describe
from visioneval.baselines.hints import majority_answers, pixel_reader
from visioneval.core import registry
from visioneval.core.backend_spec import LOCAL_KINDS
from visioneval.core.benchmark import Benchmark
from visioneval.core.records import GenerationSettings
from visioneval.core.runfiles import BenchmarkPlan, Identity, Pricing, ProbedResolution, RunInfo
from visioneval.core.store import RunDirError, RunLock, RunStore
from visioneval.cost.budget import Budget
from visioneval.cost.prices import (
    JUDGE_GIVEN,
    ModelRef,
    given_price,
    recorded_judge_price,
    recorded_price,
)
from visioneval.engine.options import Change, EngineOptions, dispatch, http_limits
from visioneval.engine.stopping import SequentialStop, StoppingFlags, refusal
from visioneval.io.parquet import DataError
from visioneval.probe.canary import CanaryDesign
from visioneval.probe.resolution import ProbeSettings, probe
from visioneval.runs.batching import MAX_COST_REFUSED, batch_setup
from visioneval.runs.batching import refusal as batch_refusal
from visioneval.runs.output import Output
from visioneval.runs.session import (
    Models,
    SessionPlan,
    SessionResult,
    check_resumable,
    new_run_info,
    nothing_to_evaluate,
    planned,
    run_dir_for,
    run_session,
)
from visioneval.runs.spec import RunSpec
from visioneval.runs.target import judge_flags, target_flags

if TYPE_CHECKING:
    from visioneval.engine.batch_runner import BatchSetup
    from visioneval.report.early import EarlyPage


def run_directory(spec: RunSpec) -> Path:
    """Where a new run goes (`run_dir_for`). Refuses a selection without samples before
    anything is made."""
    benchmark = spec.build()
    if benchmark.total() == 0:  # before anything is sent or created
        raise DataError(nothing_to_evaluate(benchmark))
    return run_dir_for(spec.out, benchmark.name, spec.backend.model, spec.shard)


async def run_to_end(spec: RunSpec, output: Output,
                     report: Callable[[Path], Path | None] | None = None
                     ) -> tuple[SessionResult, Path | None]:
    """A new run in this process's event loop, and its report page drawn by `report` while
    the run directory is still held (the Python API's path; the commands add Ctrl-C and
    their printing around `execute`)."""
    directory = run_directory(spec)
    lock = RunLock(directory)
    try:
        result = await execute(spec, directory, output, lock)
        page = report(directory) if report is not None else None
    finally:
        lock.release()
    return result, page


@dataclass(frozen=True)
class Continuing:
    """A session of a run that exists already: `changes`, the recorded engine settings the
    command line replaced (said, and recorded in the session); `stopping`, --target-ci or
    --min-samples given again. `resumed`: continued by --resume, which takes the run's own
    settings; False: a run of a suite found half done, continued with its RunSpec's."""

    changes: Sequence[Change] = ()
    stopping: StoppingFlags = field(default_factory=StoppingFlags)
    resumed: bool = True


async def execute(spec: RunSpec, directory: Path, output: Output, lock: RunLock,
                  continuing: Continuing | None = None) -> SessionResult:
    """One session of `spec` in `directory`: preflight, run directory (new, or the run
    there continued: `continuing`), the engine, metrics and tables. `lock` is taken after
    the preflight and held by the caller to its report. A new run first measures the
    endpoint's effective resolution when its RunSpec asks (`probe_resolution`, recorded in
    run.json) and goes through the provider's batch API when it asks (`batch`; a continued
    run does if it started so)."""
    benchmark = spec.build()
    resumed = continuing is not None and continuing.resumed  # the run's own settings
    engine = spec.engine.for_shard(spec.shard) \
        if spec.shard is not None and not resumed else spec.engine
    new_rule = spec.stopping.rule(spec.seed()) if spec.stopping and not resumed else None
    settings = spec.settings()
    budget = _budget(benchmark, spec.backend, engine,
                     directory if continuing is not None else None)
    models = _models(spec.backend, benchmark, engine)
    async with contextlib.AsyncExitStack() as opened:
        for each in (models.backend, models.judge, *models.panel):
            if each is not None:
                await opened.enter_async_context(each)
                await each.preflight()
        # The data's fingerprint reads every file: in a thread, so the event loop goes on
        # serving other runs of the process (a suite's lanes) meanwhile.
        plan = await asyncio.to_thread(planned, benchmark)
        probed = await _probe(models.backend, engine, output) \
            if spec.probe_resolution and continuing is None else None
        lock.acquire()  # a new run's directory exists from here on; a resume holds it already
        if continuing is not None:
            store = _continued(spec, directory, plan, models, engine)
            rule = resumed_rule(store.info, benchmark, directory,
                                _stopping_again(spec, continuing))
            changes = {c.setting: c.as_pair() for c in continuing.changes} or None
        else:
            rule = SequentialStop(new_rule, benchmark.headline_outcome,
                                  proportion=benchmark.headline_proportion() or "accuracy") \
                if new_rule else None
            store = _created(spec, settings, directory, plan, models.backend, engine, probed)
            changes = None
        _say_identity(models.backend, output)
        if notice := models.backend.notice():
            output.err.print(notice, highlight=False, markup=False)
        batches = _batches(benchmark, spec.backend, models.backend, output, engine) \
            if spec.batch or store.info.batch is not None else None
        early = _early_page(store, output) if batches is None else None
        try:
            result = await run_session(benchmark, models, store, SessionPlan(
                settings, engine, budget, changes, batches, rule,
                early.recorded if early else None, early.readers() if early else ()), output)
        except BaseException:
            if early is not None:
                early.close()
            raise
        if early is not None:
            result.thumbnails = early.thumbnails()
            result.page_rows = early.rows()
        return result


def _models(spec: BackendSpec, benchmark: Benchmark, engine: EngineOptions) -> Models:
    """The model the run asks, and its benchmark's judge and panel (their servers named by
    the benchmark's options), built but not yet opened."""
    if spec.kind == "builtin":
        check_fits(spec.model, benchmark.name, benchmark.builtin_models,
                   _builtin_note(benchmark.name))
    majority = majority_answers(benchmark) if spec.kind == "builtin" and \
        spec.model == "majority" else None
    reader = pixel_reader(benchmark) if spec.kind == "builtin" and spec.model == "reader" \
        else None
    servers = spec.kind not in LOCAL_KINDS or benchmark.judge is not None \
        or bool(benchmark.panel)
    limits = http_limits(engine) if servers else None
    backend = make_backend(spec, connections=engine.concurrency, majority=majority, reader=reader,
                           seed=getattr(benchmark.options, "seed", 0),
                           dispatch=dispatch(engine), limits=limits,
                           flags=target_flags(benchmark.name))
    judge = make_backend(benchmark.judge, connections=engine.concurrency, limits=limits,
                         flags=judge_flags(benchmark.name)) \
        if benchmark.judge is not None else None
    panel = tuple(make_backend(member, connections=engine.concurrency, limits=limits,
                               flags=judge_flags(benchmark.name)) for member in benchmark.panel)
    return Models(backend, judge, panel)


def _created(spec: RunSpec, settings: GenerationSettings, directory: Path,
             plan: BenchmarkPlan, backend: Backend, engine: EngineOptions,
             probed: ProbedResolution | None) -> RunStore:
    """A new run's directory and its run.json."""
    info = new_run_info(plan, spec.backend, settings, engine, spec.definition, spec.shard)
    info.backend.identity = Identity.model_validate(backend.identity())
    if probed is not None:
        info.resolution_probe = probed
    return RunStore.create(directory, info)


def _continued(spec: RunSpec, directory: Path, plan: BenchmarkPlan, models: Models,
               engine: EngineOptions) -> RunStore:
    """The run in `directory`, checked to be this one (the same data, the same models),
    with the settings this session runs with recorded."""
    store = RunStore.open(directory)
    check_resumable(store.info, plan)
    if plan.dataset.stat is not None:  # the same data, perhaps copied: as it is now
        store.info.dataset.stat = plan.dataset.stat
    check_same_model(store.info, models.backend, models.judge, models.panel)
    if (pricing := engine.pricing()) is not None:  # prices given again replace them
        store.info.pricing = Pricing.model_validate(pricing)
    store.info.record_engine(engine)
    if spec.definition and store.info.definition not in (None, spec.definition):
        # The user's own definition, named again from where it is now.
        store.info.definition = spec.definition
    return store


def _stopping_again(spec: RunSpec, continuing: Continuing) -> StoppingFlags:
    """--target-ci and --min-samples for a continued run: a resume's as given again; a
    suite's run found half done goes on with the suite file's rule."""
    if continuing.resumed:
        return continuing.stopping
    return StoppingFlags(spec.stopping.target_ci, spec.stopping.min_samples) \
        if spec.stopping else StoppingFlags()


def _early_page(store: RunStore, output: Output) -> EarlyPage | None:
    """The end-of-run page's thumbnails, made while answers arrive, when the caller draws
    that page with them (`Output.early_thumbnails`)."""
    if not (output.report and output.early_thumbnails):
        return None
    # the page's code loads only for a run that draws one (`--no-report` loads none of it)
    from visioneval.report.early import EarlyPage

    return EarlyPage(store.info, store.directory)


def _batches(benchmark: Benchmark, spec: BackendSpec, backend: Backend,
             output: Output, engine: EngineOptions) -> BatchSetup:
    """The session's batch setup (`visioneval.runs.batching`); a ValueError of one line
    when the run cannot be sent in batches (a resumed run rebuilt from its record), or
    when a --max-cost was given (a batch is sent at once: no request-by-request limit)."""
    if engine.max_cost is not None:
        raise ValueError(MAX_COST_REFUSED)
    why = batch_refusal(benchmark, spec)
    if why is not None:
        raise ValueError(why)
    return batch_setup(backend, output)


def resumed_rule(info: RunInfo, benchmark: Benchmark, directory: Path,
                 given: StoppingFlags) -> SequentialStop | None:
    """The stopping rule the run recorded, with --target-ci or --min-samples given again;
    a run started without one takes none (its samples were not run in a random order)."""
    if info.stopping is None:
        if given.width is not None or given.min_samples is not None:
            raise ValueError(f"{directory} was started without --target-ci, so its samples "
                             "were not run in a seeded random order and no stopping rule "
                             "can be put on them; start a new run with --target-ci")
        return None
    if (refused := refusal(benchmark)) is not None:
        raise ValueError(refused)
    return SequentialStop.resumed(info.stopping, benchmark.headline_outcome, given.width,
                                  given.min_samples)


async def _probe(backend: Backend, engine: EngineOptions, output: Output) -> ProbedResolution:
    """The endpoint's effective resolution, measured through the run's own backend before
    its first sample (`--probe-resolution`); said in one line."""
    settings = ProbeSettings(concurrency=engine.concurrency, max_attempts=engine.max_attempts,
                             timeout_s=engine.timeout_s)
    output.err.print(f"probing the endpoint's resolution first: "
                     f"{CanaryDesign().requests} stripe images (not in the run's counts "
                     "or cost)", highlight=False)
    found = await probe(backend, settings)
    output.err.print(f"resolution probe: {found.summary}", highlight=False,
                     markup=False)
    return ProbedResolution.model_validate(found.model_dump(mode="json"))


def _builtin_note(name: str) -> str:
    """The benchmark's `builtin_note` (registered benchmarks; "" for others)."""
    return registry.definition(name).builtin_note if name in registry.names() else ""


def check_same_model(info: RunInfo, backend: Backend, judge: Backend | None,
                     panel: Sequence[Backend] = ()) -> None:
    """A resumed run must ask the models it started with (the model, its judge, each panel
    model by position): a server that now serves other weights under the same name (a new
    checkpoint, a new pull) would mix two models' answers in one run. Compared where both
    the record (the last session that recorded one) and the server say what they serve."""
    pairs = [("model", info.backend.identity, backend)]
    if judge is not None:
        last = [s.judge_identity for s in info.sessions if s.judge_identity]
        pairs.append(("judge", last[-1] if last else None, judge))
    for k, member in enumerate(panel, 1):
        found = [s.panel_identities[k - 1] for s in info.sessions
                 if s.panel_identities and len(s.panel_identities) >= k]
        pairs.append((f"panel model {k}", found[-1] if found else None, member))
    for role, recorded, now in pairs:
        if recorded is None:
            continue
        before, after = recorded.served, now.identity().get("served")
        if before and after and before != after:
            raise RunDirError(
                f"the {role} server now serves {describe(now.identity())}, but this run "
                f"started with {describe(recorded.as_dict())}: resuming would mix two "
                "models' answers in one run; start a new run for the new model")


def _say_identity(backend: Backend, output: Output) -> None:
    """One line when the server does not say what it serves: cached answers are then kept
    per URL, and nothing tells a new checkpoint under the same name from the old one."""
    identity = backend.identity()
    if identity.get("served") is None and identity.get("base_url"):
        output.err.print(f"note: {identity.get('base_url')} does not say which checkpoint it "
                         f"serves as '{identity.get('model')}' (no `root` or digest in its "
                         "model list), so cached answers are reused for this URL and name; "
                         "after changing the weights behind them, use --refresh-cache",
                         highlight=False, markup=False)


def _budget(benchmark: Benchmark, spec: BackendSpec, engine: EngineOptions,
            resumed: Path | None) -> Budget | None:
    """--max-cost's budget for this session, priced before anything is sent (a resume
    without prices uses the ones the run recorded); a ValueError when a price is unknown."""
    if engine.max_cost is None:
        return None

    given = given_price(engine.price_in, engine.price_out)
    judge_given = given_price(engine.judge_price_in, engine.judge_price_out, JUDGE_GIVEN)
    if resumed is not None:
        pricing = RunStore.open(resumed).info.pricing
        given = given or recorded_price(pricing)
        judge_given = judge_given or recorded_judge_price(pricing)
    judge = ModelRef.from_spec(benchmark.judge) if benchmark.judge is not None else None
    panel = [ModelRef.from_spec(member) for member in benchmark.panel]
    return Budget.for_run(engine.max_cost, ModelRef.from_spec(spec), judge, given, panel,
                          judge_given)
