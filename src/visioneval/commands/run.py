"""Running any benchmark: backend, preflight, run directory, session, report, resume."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from visioneval.backends.base import Backend
from visioneval.backends.builtin import check_fits
from visioneval.backends.reasoning import OUT_OF_TOKENS
from visioneval.backends.registry import BackendSpec, make_backend
from visioneval.backends.served import describe
from visioneval.baselines.hints import majority_answers
from visioneval.commands.resume_target import judge_flags, resume_command, target_flags
from visioneval.core.benchmark import Benchmark
from visioneval.core.records import GenerationSettings
from visioneval.core.runfiles import CostInfo, Identity, Pricing, RunInfo
from visioneval.core.store import RunDirError, RunLock, RunStore, WriteError
from visioneval.cost.money import usd
from visioneval.cost.prices import ModelRef, given_price, recorded_price
from visioneval.engine.options import Change, EngineOptions
from visioneval.engine.runner import CostLimitReached, RunStopped
from visioneval.invocation import command
from visioneval.io.parquet import DataError
from visioneval.session import (
    SessionResult,
    check_resumable,
    default_run_dir,
    new_run_info,
    nothing_to_evaluate,
    planned,
    run_session,
)
from visioneval.shards import Shard

if TYPE_CHECKING:
    from visioneval.cost.budget import Budget
    from visioneval.engine.progress import ProgressBoard

EXIT_INTERRUPTED = 130
EXIT_USAGE = 2
EXIT_STOPPED = 2  # the run could not go on (refused key): as for a run that cannot start
EXIT_COST_LIMIT = 3  # --max-cost was spent: what finished is recorded, --resume continues


@dataclass(frozen=True)
class Output:
    """Where a command talks (stdout for results, stderr for progress and logs) and what it
    draws besides the run directory."""

    console: Console
    err: Console
    progress: bool = True
    report: bool = True
    board: ProgressBoard | None = None  # a display shared with other runs (a suite's)
    label: str | None = None  # the run's name on that display


async def session(benchmark: Benchmark, spec: BackendSpec, settings: GenerationSettings,
                  engine: EngineOptions, directory: Path, resume: bool, output: Output,
                  lock: RunLock, definition: str | None = None,
                  shard: Shard | None = None,
                  changes: Sequence[Change] = ()) -> SessionResult:
    """Preflight, run directory (new or resumed, locked), the engine, metrics and tables.
    `changes`: the recorded engine settings a resume replaced (said, and recorded in the
    session)."""
    budget = _budget(benchmark, spec, engine, directory if resume else None)
    if spec.kind == "builtin":
        check_fits(spec.model, benchmark.name, benchmark.builtin_models,
                   _builtin_note(benchmark.name))
    majority = majority_answers(benchmark) if spec.kind == "builtin" and \
        spec.model == "majority" else None
    servers = spec.kind not in ("builtin", "none") or benchmark.judge is not None
    limits = engine.http_limits() if servers else None
    backend = make_backend(spec, connections=engine.concurrency, majority=majority,
                           seed=getattr(benchmark.options, "seed", 0),
                           dispatch=engine.dispatch(), limits=limits,
                           flags=target_flags(benchmark.name))
    judge = make_backend(benchmark.judge, connections=engine.concurrency, limits=limits,
                         flags=judge_flags(benchmark.name)) \
        if benchmark.judge is not None else None
    async with backend, (judge or contextlib.nullcontext()):
        await backend.preflight()
        if judge is not None:
            await judge.preflight()
        # The data's fingerprint reads every file: in a thread, so the event loop goes on
        # serving other runs of the process (a suite's lanes) meanwhile.
        plan = await asyncio.to_thread(planned, benchmark)
        lock.acquire()  # a new run's directory exists from here on; a resume holds it already
        engine_changes: dict[str, list[Any]] | None = None
        if resume:
            store = RunStore.open(directory)
            check_resumable(store.info, plan)
            if plan.dataset.stat is not None:  # the same data, perhaps copied: as it is now
                store.info.dataset.stat = plan.dataset.stat
            check_same_model(store.info, backend, judge)
            if (pricing := engine.pricing()) is not None:  # prices given again replace them
                store.info.pricing = Pricing.model_validate(pricing)
            store.info.record_engine(engine)
            if definition and store.info.definition not in (None, definition):
                # The user's own definition, named again from where it is now.
                store.info.definition = definition
            if changes:
                engine_changes = {c.setting: c.as_pair() for c in changes}
        else:
            info = new_run_info(plan, spec, settings, engine, definition, shard)
            info.backend.identity = Identity.model_validate(backend.identity())
            store = RunStore.create(directory, info)
        _say_identity(backend, output)
        return await run_session(benchmark, backend, store, settings, engine, output.err,
                                 output.progress, judge, budget, engine_changes, output.board,
                                 output.label)


def _builtin_note(name: str) -> str:
    """The benchmark's `builtin_note` (registered benchmarks; "" for others)."""
    from visioneval.core import registry

    return registry.definition(name).builtin_note if name in registry.names() else ""


def check_same_model(info: RunInfo, backend: Backend, judge: Backend | None) -> None:
    """A resumed run must ask the model it started with: a server that now serves other
    weights under the same name (a new checkpoint, a new pull) would mix two models'
    answers in one run. Compared where both the record and the server say what they serve."""
    pairs = [("model", info.backend.identity, backend)]
    if judge is not None:
        last = [s.judge_identity for s in info.sessions if s.judge_identity]
        pairs.append(("judge", last[-1] if last else None, judge))
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
                         highlight=False, soft_wrap=True, markup=False)


def _budget(benchmark: Benchmark, spec: BackendSpec, engine: EngineOptions,
            resumed: Path | None) -> Budget | None:
    """--max-cost's budget for this session, priced before anything is sent (a resume
    without prices uses the ones the run recorded); a ValueError when a price is unknown."""
    if engine.max_cost is None:
        return None
    from visioneval.cost.budget import Budget

    given = given_price(engine.price_in, engine.price_out)
    if given is None and resumed is not None:
        given = recorded_price(RunStore.open(resumed).info.pricing)
    judge = ModelRef.from_spec(benchmark.judge) if benchmark.judge is not None else None
    return Budget.for_run(engine.max_cost, ModelRef.from_spec(spec), judge, given)


def run(benchmark: Benchmark, spec: BackendSpec, settings: GenerationSettings,
        engine: EngineOptions, out: Path | None, output: Output,
        definition: str | None = None, shard: Shard | None = None) -> int:
    """A new run (of `shard` of the samples, or all of them)."""
    if benchmark.total() == 0:  # before anything is sent or created
        raise DataError(nothing_to_evaluate(benchmark))
    directory = out or default_run_dir(benchmark.name, spec.model)
    if shard is not None:
        engine = engine.for_shard(shard)
        if out is None:
            directory = directory.with_name(f"{directory.name}-shard-{shard.dirname}")
    lock = RunLock(directory)  # taken after preflight, by the session; held to the report
    try:
        return _execute(session(benchmark, spec, settings, engine, directory, False, output,
                                lock, definition, shard), benchmark, directory, output)
    finally:
        lock.release()


def _execute(session: Coroutine[Any, Any, SessionResult], benchmark: Benchmark,
             directory: Path, output: Output) -> int:
    """Run the session; Ctrl-C keeps what finished and says how to continue."""
    def again() -> str:  # after the run started: run.json says whose benchmark it is
        return _resume_line(directory, benchmark.name)

    try:
        result = asyncio.run(session)
    except KeyboardInterrupt:
        output.err.print(f"[yellow]interrupted: {_kept(directory)} samples are kept in "
                         f"{directory}; continue with: {escape(again())}[/]",
                         highlight=False, soft_wrap=True)
        return EXIT_INTERRUPTED
    except CostLimitReached as exc:
        output.err.print(f"[yellow]stopped: {escape(str(exc))}. {_kept(directory)} samples are "
                         f"recorded in {directory}; the rest were not sent. Continue with: "
                         f"{escape(again())} (add --max-cost to limit that session too)[/]",
                         highlight=False, soft_wrap=True)
        return EXIT_COST_LIMIT
    except RunStopped as exc:
        output.err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        output.err.print(f"[yellow]{_kept(directory)} samples are recorded in {directory}; "
                         f"the rest were not sent. Continue with: {escape(again())}[/]",
                         highlight=False, soft_wrap=True)
        return EXIT_STOPPED
    except WriteError as exc:
        output.err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False,
                         soft_wrap=True)
        output.err.print(f"[yellow]free some space, then continue with: {escape(again())}[/]",
                         highlight=False, soft_wrap=True)
        return EXIT_STOPPED
    code = report(result, benchmark, output)
    return code if result.n_records else _nothing_evaluated(result, output)


def _nothing_evaluated(result: SessionResult, output: Output) -> int:
    """A run that recorded nothing (every row skipped) could not do its job: exit 2."""
    n = result.stats.skipped
    why = (f"every row was skipped ({n} {'row' if n == 1 else 'rows'}; see the lines above)"
           if n else "no sample was recorded")
    output.err.print(f"[bold red]error:[/] nothing was evaluated: {why}; {result.directory} "
                     "holds the empty run", highlight=False, soft_wrap=True)
    return EXIT_USAGE


def _resume_line(directory: Path, name: str) -> str:
    """The command that continues the run in `directory` (of benchmark `name`)."""
    if (directory / "run.json").exists():
        return resume_command(RunStore.open(directory).info, directory)
    return resume_command(name, directory)


def _kept(directory: Path) -> int:
    counts = RunStore.open(directory).info.counts \
        if (directory / "run.json").exists() else None
    return counts.records if counts is not None else 0


def cost_line(cost: CostInfo | None, cache_hits: int = 0) -> str:
    """The run's cost as run.json says it (all sessions): dollars and where they come from,
    or why it is unknown; per group when there are several; cached answers are free."""
    cached = (f"; {cache_hits} answers from the cache cost nothing this session"
              if cache_hits else "")
    if cost is None:
        return "cost: not recorded"
    if cost.usd is None:
        return f"cost: unknown ({cost.unavailable or 'no reason recorded'}){cached}"
    groups = cost.groups or {}
    per = ("; per group: " + ", ".join(f"{g} {usd(v)}" for g, v in groups.items())
           if len(groups) > 1 else "")
    return f"cost: {usd(cost.usd)} ({cost.source}){per}{cached}"


def cache_line(sources: dict[str, int], info: RunInfo) -> str:
    """Where this session's cached answers came from: the runs that stored them, for the
    model identity that keys them."""
    last = info.sessions[-1].model_identity if info.sessions else None
    found = last or info.backend.identity
    identity = found.as_dict() if found is not None else {}
    runs = sorted(sources.items(), key=lambda kv: -kv[1])
    named = ", ".join(f"{n} from {run}" for run, n in runs[:3])
    more = f" and {sum(n for _, n in runs[3:])} from {len(runs) - 3} other runs" \
        if len(runs) > 3 else ""
    return (f"cached answers: {named}{more} (the same model: {describe(identity)}; "
            f"`{command('cache', 'show', '--model')} NAME` lists them)")


def report(result: SessionResult, benchmark: Benchmark, output: Output) -> int:
    """Print the tables and where everything is; exit 1 if some samples ended in error."""
    console, err = output.console, output.err
    info = RunStore.open(result.directory).info
    benchmark.print_summary(result.metrics, info, console)
    stats = result.stats
    console.print(
        f"{result.n_records} samples recorded ({result.n_errors} errors, {stats.skipped} rows "
        f"skipped, {stats.cache_hits} from cache, {stats.resumed} done before) -> "
        f"[bold]{result.directory}[/]", highlight=False, soft_wrap=True)
    console.print(cost_line(info.counts.cost if info.counts else None, stats.cache_hits),
                  highlight=False, soft_wrap=True, markup=False)
    if stats.cache_sources:
        console.print(cache_line(stats.cache_sources, info), highlight=False, soft_wrap=True,
                      markup=False)
    page = None
    if output.report:
        from visioneval.report.page import try_write_report  # only when a page is written

        page = try_write_report(result.directory)
    if page is not None:
        console.print(f"report: [bold]{page}[/]", highlight=False, soft_wrap=True)
    if stats.error_reasons:
        err.print("most common error reasons (this session):", highlight=False)
        for reason, count in stats.top_reasons():
            err.print(f"  {count:>6} x {reason}", highlight=False, soft_wrap=True,
                      markup=False)
    if result.n_errors:
        cut = sum(n for reason, n in stats.error_reasons.items()
                  if reason.startswith(OUT_OF_TOKENS))
        if cut:
            err.print(f"[yellow]{cut} of them spent all of --max-tokens "
                      f"{info.generation.max_tokens} thinking: a resume "
                      "asks with the same --max-tokens, so give these a new run with a "
                      "larger one[/]", highlight=False, soft_wrap=True)
        err.print(f"[yellow]{result.n_errors} samples failed and are left out of the scores; "
                  f"retry them with: {escape(resume_command(info, result.directory))}[/]",
                  highlight=False, soft_wrap=True)
        return 1
    return 0
