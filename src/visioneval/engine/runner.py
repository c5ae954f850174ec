"""The one path every sample takes: request -> cache or backend (with retries) -> score ->
journal. The runner knows nothing about any benchmark; it gets samples and a scorer, and
optionally a solver for samples that need more than one request (a judge that is asked to
repair its reply, or sampled N times)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Container, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field

from visioneval.backends.base import Backend
from visioneval.core import defaults
from visioneval.core.records import (
    GenerationSettings,
    Record,
    Request,
    Response,
    Sample,
    SkippedRow,
)
from visioneval.core.runfiles import SessionCounts
from visioneval.core.solver import CacheIf, Solved, Solver
from visioneval.core.store import RunStore, WriteError
from visioneval.cost.usage import UsageBook, panel_role
from visioneval.engine.cache import Origin, ResponseCache, cache_key
from visioneval.engine.progress import RunProgress
from visioneval.engine.retry import (
    AUTH_STOP_AFTER,
    NOT_FOUND_STOP_AFTER,
    RetryPolicy,
    RetryWatch,
    error_reason,
    generate,
)

if TYPE_CHECKING:
    from visioneval.cost.budget import Budget
    from visioneval.engine.stopping import SequentialStop

log = logging.getLogger(__name__)

Scorer = Callable[[Sample, str], tuple[dict[str, Any], dict[str, dict[str, float]]]]
"""(sample, response text) -> (parsed answers, scores); called only for successful responses."""

RecordWatch = Callable[[Sample, Record], None]
"""Told of each record once it is journaled, with the sample as it was asked: work that the
end of the run needs and can do while answers still arrive (the report's thumbnails). It
must not raise: the run does not depend on it."""




@dataclass(frozen=True, slots=True)
class _EngineAsk:
    """The `Ask` a solver gets: the engine's request path, this session's counters, and the
    sample's group (its requests' usage is counted under it)."""

    engine: Engine
    stats: RunStats
    group: str = ""
    epoch: int = 1  # the sample's: a repeated answer's requests carry its epoch's seed

    @property
    def settings(self) -> GenerationSettings:
        return self.engine.settings.for_epoch(self.epoch)

    @property
    def run_dir(self) -> Path:
        return self.engine.store.directory

    def __call__(self, request: Request, cache_if: CacheIf | None = None, *,
                 judge: bool = False, panel: int = 0) -> Awaitable[Response]:
        return self.engine.ask(request, self.stats, cache_if, judge=judge, panel=panel,
                               group=self.group)



class RunStopped(Exception):
    """The run stopped sending (the server refused the key); what finished is recorded."""


class CostLimitReached(RunStopped):
    """The session spent its --max-cost: no new request is sent; what finished is recorded.
    Its message is the budget's state when it is read, so a line printed once the run has
    ended counts the answers that were still in flight when the limit was reached."""

    def __init__(self, budget: Budget):
        super().__init__()
        self.budget = budget

    def __str__(self) -> str:
        return self.budget.line()


READ_AHEAD = 8
"""Samples read ahead of the workers. Enough to keep them fed (a row is read and checked in
well under a millisecond), few enough that big images waiting in the queue cost little:
300 x 1.26 MB PNGs at --concurrency 64 peaked 60 MB lower than with a queue of 64, at the
same or a higher rate (docs/PERFORMANCE.md)."""

MAX_REASONS = 50
"""Distinct error reasons kept per session; the rest are counted under OTHER_REASONS."""
OTHER_REASONS = "(other reasons)"
MAX_CACHE_SOURCES = 50
"""Distinct runs named as the source of cached answers per session; the rest are counted
under OTHER_SOURCES."""
OTHER_SOURCES = "(other runs)"


class RunStats(SessionCounts):
    """What this session did, counted as it goes: run.json's counters of a session
    (`SessionCounts`; `judge_requests` are those of `sent` and `cache_hits` that went to, or
    came cached from, the judge) and what goes beside them."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    skipped_rows: list[dict[str, str]] = Field(default_factory=list)
    error_reasons: dict[str, int] = Field(default_factory=dict)
    cache_sources: dict[str, int] = Field(default_factory=dict)  # run directory -> answers
    usage: UsageBook = Field(default_factory=UsageBook)  # per role and group, for the cost

    def as_dict(self) -> dict[str, Any]:
        """The session's counters as run.json writes them."""
        return self.model_dump(exclude={"usage"}) | {"usage": self.usage.as_dict()}

    def count_error(self, error: str) -> None:
        """Count a failed sample under its reason (bounded: at most MAX_REASONS kept)."""
        reason = error_reason(error)
        reasons = self.error_reasons
        if reason not in reasons and len(reasons) >= MAX_REASONS:
            reason = OTHER_REASONS
        reasons[reason] = reasons.get(reason, 0) + 1

    def count_cache_hit(self, response: Response) -> None:
        """Count a cached answer under the run that stored it (bounded like the reasons)."""
        self.cache_hits += 1
        source = response.cached_from or "?"
        sources = self.cache_sources
        if source not in sources and len(sources) >= MAX_CACHE_SOURCES:
            source = OTHER_SOURCES
        sources[source] = sources.get(source, 0) + 1

    def top_reasons(self, n: int = 5) -> list[tuple[str, int]]:
        return sorted(self.error_reasons.items(), key=lambda kv: -kv[1])[:n]


@dataclass
class Engine:
    """Everything about *how* to run, none of *what*: backend, settings, limits, storage."""

    backend: Backend
    store: RunStore
    settings: GenerationSettings
    policy: RetryPolicy
    concurrency: int = defaults.CONCURRENCY
    cache: ResponseCache | None = None
    watch: RetryWatch = field(default_factory=RetryWatch)
    judge: Backend | None = None
    """The benchmark's judge model, for solvers that grade answers with one."""
    panel: tuple[Backend, ...] = ()
    """The benchmark's panel models (`Benchmark.panel`), asked by position: `ask(panel=k)`."""
    budget: Budget | None = None
    """--max-cost: no request is sent once it is spent (CostLimitReached)."""
    read_cache: bool = True
    """False (--refresh-cache): every request is sent and its answer replaces the cached one."""
    _origins: dict[int, tuple[dict[str, Any], Origin]] = field(default_factory=dict,
                                                               init=False, repr=False)

    async def run(self, samples: Iterable[Sample | SkippedRow], scorer: Scorer,
                  progress: RunProgress, done: Container[str], stats: RunStats,
                  solver: Solver | None = None,
                  stopping: SequentialStop | None = None,
                  on_record: RecordWatch | None = None) -> RunStats:
        """Run every sample not in `done` with `concurrency` workers; `stats` is updated as
        samples finish, so an interrupted session still knows what it did.

        Three kinds of task keep the network busy: a producer reads and checks samples into a
        queue while the workers wait on the network; a worker sends the next request as soon
        as an answer arrives and hands the answer to a single writer, which scores, journals
        and caches it. When a wave of answers arrives at once, every next request is out
        before any bookkeeping is done. A bug in scoring cancels everything (TaskGroup) and
        leaves the journal as it was. When the server refuses the key a few times in a row,
        the workers stop taking samples, what was answered is recorded, and RunStopped is
        raised: the samples never sent have no record and a resume sends them.

        `stopping` (--target-ci): the samples come in the seeded order; each journaled
        record's outcome is fed to the rule by its position, and once the rule is satisfied
        the producer puts no new sample in the queue (those in flight finish and are
        recorded). `on_record` is told of each record once it is journaled."""
        progress.watch_retries(self.watch)
        stopped: list[RunStopped] = []
        # Workers start as samples arrive, never more than the samples sent: a --concurrency
        # far beyond the work (a million on 12 samples) costs nothing.
        workers: list[asyncio.Task[None]] = []
        staffed = asyncio.Event()  # set once `workers` is complete
        todo: asyncio.Queue[Sample | None] = asyncio.Queue(maxsize=min(self.concurrency,
                                                                       READ_AHEAD))
        answered: asyncio.Queue[tuple[Sample, Solved] | None] = asyncio.Queue()
        positions: dict[str, int] = {}  # in flight, by id: their place in the order

        async def produce() -> None:
            position = -1
            for item in samples:
                if stopping is not None and isinstance(item, Sample):
                    position += 1
                    if item.id in done:
                        stats.resumed += 1
                        stopping.resumed_sample(position, item.id)
                        continue
                    sends = stopping.sends(item.id)
                    if sends is None:
                        break
                    if not sends:
                        continue
                    positions[item.id] = position
                if isinstance(item, SkippedRow):
                    log.warning(item.line())
                    stats.skipped += 1
                    stats.skipped_rows.append({"group": item.group, "row": item.row,
                                               "reason": item.reason})
                    progress.skip(item.samples)
                elif item.id in done:
                    stats.resumed += 1
                else:
                    if not staffed.is_set():
                        workers.append(group.create_task(work()))
                        if len(workers) >= self.concurrency:
                            staffed.set()
                    await todo.put(item)  # suspends while the queue is full
            staffed.set()
            for _ in workers:
                await todo.put(None)

        async def work() -> None:
            try:
                while (sample := await todo.get()) is not None:
                    ask = _EngineAsk(self, stats, sample.group, sample.epoch)
                    if solver is None:
                        solved = Solved(await ask(Request(sample.messages, ask.settings)))
                    else:
                        solved = await solver(sample, ask)
                    answered.put_nowait((sample, solved))
            except RunStopped as exc:
                stopped.append(exc)
                staffed.set()  # no new worker: the run is stopping

        async def write() -> None:
            while (item := await answered.get()) is not None:
                record = self._record(*item, scorer, stats, progress)
                if on_record is not None:
                    on_record(item[1].asked or item[0], record)
                if stopping is not None:
                    stopping.observe(positions.pop(record.id), record)

        group = asyncio.TaskGroup()
        try:
            async with group:
                producer = group.create_task(produce())
                writer = group.create_task(write())
                await staffed.wait()
                await asyncio.gather(*workers)
                producer.cancel()  # done already, unless the workers stopped early
                answered.put_nowait(None)
                await writer
        except* WriteError as failed:
            # The journal cannot be written (a full disk): the run stops with that one line.
            raise failed.exceptions[0] from None
        if stopped:
            raise stopped[0]
        return stats

    def _record(self, sample: Sample, solved: Solved, scorer: Scorer, stats: RunStats,
                progress: RunProgress) -> Record:
        """Score and journal one answer (the journal line is the sample's commit)."""
        response = solved.response
        shown = solved.asked or sample
        # Built from our own typed parts: no need to validate again.
        record = Record.model_construct(id=sample.id, group=sample.group, target=shown.target,
                                        response=response, metadata=shown.metadata,
                                        prompt=shown.prompt_summary(),
                                        parsed=solved.parsed or {}, scores=solved.scores or {})
        if solved.parsed is None and response.ok:
            record.parsed, record.scores = scorer(shown, response.text or "")
        if not response.ok:
            stats.errors += 1
            stats.count_error(response.error or "no answer")
            log.debug("sample %s failed: %s", sample.id, response.error)
        self.store.append(record)
        stats.finished += 1
        progress.advance(error=not response.ok)
        return record

    async def ask(self, request: Request, stats: RunStats,
                  cache_if: CacheIf | None = None, *, judge: bool = False,
                  panel: int = 0, group: str = "") -> Response:
        """The cached answer, or the backend's (with retries), cached when it succeeds and
        `cache_if` (if given) accepts it; a cached answer `cache_if` rejects is not used.
        `judge`: the judge model's answer; `panel`: the k-th panel model's (1-based; 0:
        none); each model's identity keys its own cache entries. `group`: the sample's
        group, under which the request's usage is counted."""
        backend, role = self._asked(judge, panel)
        if judge:
            stats.judge_requests += 1
        key, origin = None, None
        if self.cache is not None:
            identity, origin = self._origin(backend)
            key = cache_key(identity, request)
            hit = self.cache.get(key) if self.read_cache else None
            if hit is not None and (cache_if is None or cache_if(hit)):
                stats.count_cache_hit(hit)
                return hit
        if self.watch.key_refused:
            raise RunStopped(self._key_refused_line())
        if self.watch.url_not_found:
            raise RunStopped(self._not_found_line())
        budget = self.budget
        if budget is not None and budget.exhausted():
            raise CostLimitReached(budget)
        stats.sent += 1
        response = await generate(backend, request, self.policy, self.watch)
        stats.prompt_tokens += response.prompt_tokens or 0  # tokens paid for in this session
        stats.completion_tokens += response.completion_tokens or 0
        stats.usage.add(role, group, response)
        if budget is not None:
            budget.charge(role, request, response)
        if self.cache is not None and key and origin is not None and \
                (cache_if is None or cache_if(response)):
            # After the worker's next send, not before it (the put serialises the response).
            asyncio.get_running_loop().call_soon(self.cache.put, key, response, origin)
        return response

    def _asked(self, judge: bool, panel: int) -> tuple[Backend, str]:
        """The backend a request goes to and the usage role it is counted under."""
        if judge and panel:
            raise ValueError(f"a solver asked for the judge and panel model {panel} at once; "
                             "a request goes to one model")
        if judge:
            if self.judge is None:
                raise RuntimeError("a solver asked for a judge, but the run has none")
            return self.judge, "judge"
        if panel:
            if not 1 <= panel <= len(self.panel):
                raise RuntimeError(f"a solver asked for panel model {panel}, but the run has "
                                   f"{len(self.panel)} (positions count from 1)")
            return self.panel[panel - 1], panel_role(panel)
        return self.backend, "model"

    def _origin(self, backend: Backend) -> tuple[dict[str, Any], Origin]:
        """The backend's identity (the cache key's model part) and what its new cache
        entries record, worked out once per backend: identities are fixed after preflight."""
        found = self._origins.get(id(backend))
        if found is None:
            identity = backend.identity()
            found = (identity, Origin.of(self.store.directory, identity))
            self._origins[id(backend)] = found
        return found

    def _not_found_line(self) -> str:
        error = self.watch.not_found_error
        where = error.where if error is not None else "the server"
        return (f"{where} answered HTTP 404 to {NOT_FOUND_STOP_AFTER} requests in a row, so "
                "no sample can be answered there: is --base-url right? (an OpenAI-compatible "
                "server's usually ends in /v1); stopped sending")

    def _key_refused_line(self) -> str:
        error = self.watch.auth_error
        line = error.key_line if error is not None else "the server refused the key"
        return f"{line} ({AUTH_STOP_AFTER} requests in a row were refused; stopped sending)"
