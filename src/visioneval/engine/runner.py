"""The one path every sample takes: request -> cache or backend (with retries) -> score ->
journal. The runner knows nothing about any benchmark; it gets samples and a scorer."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from visioneval.backends.base import Backend
from visioneval.engine.cache import ResponseCache, cache_key
from visioneval.engine.progress import RunProgress
from visioneval.engine.retry import RetryPolicy, generate
from visioneval.engine.store import RunStore
from visioneval.records import GenerationSettings, Record, Request, Response, Sample, SkippedRow

log = logging.getLogger(__name__)

Scorer = Callable[[Sample, str], tuple[dict[str, Any], dict[str, dict[str, float]]]]
"""(sample, response text) -> (parsed answers, scores); called only for successful responses."""


@dataclass
class RunStats:
    """What this session did; run.json keeps it under `counts`."""

    resumed: int = 0
    sent: int = 0
    cache_hits: int = 0
    finished: int = 0
    errors: int = 0
    skipped: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    skipped_rows: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Engine:
    """Everything about *how* to run, none of *what*: backend, settings, limits, storage."""

    backend: Backend
    store: RunStore
    settings: GenerationSettings
    policy: RetryPolicy
    concurrency: int = 16
    cache: ResponseCache | None = None

    async def run(self, samples: Iterable[Sample | SkippedRow], scorer: Scorer,
                  progress: RunProgress, done: set[str], stats: RunStats) -> RunStats:
        """Run every sample not in `done` with `concurrency` workers; `stats` is updated as
        samples finish, so an interrupted session still knows what it did.

        Three kinds of task keep the network busy: a producer reads and checks samples into a
        queue while the workers wait on the network; a worker sends the next request as soon
        as an answer arrives and hands the answer to a single writer, which scores, journals
        and caches it. When a wave of answers arrives at once, every next request is out
        before any bookkeeping is done. A bug in scoring cancels everything (TaskGroup) and
        leaves the journal as it was."""
        todo: asyncio.Queue[Sample | None] = asyncio.Queue(maxsize=self.concurrency)
        answered: asyncio.Queue[tuple[Sample, Response, str | None] | None] = asyncio.Queue()

        async def produce() -> None:
            for item in samples:
                if isinstance(item, SkippedRow):
                    log.warning(item.line())
                    stats.skipped += 1
                    stats.skipped_rows.append({"group": item.group, "row": item.row,
                                               "reason": item.reason})
                    progress.skip()
                elif item.id in done:
                    stats.resumed += 1
                else:
                    await todo.put(item)  # suspends while the queue is full
            for _ in range(self.concurrency):
                await todo.put(None)

        async def work() -> None:
            while (sample := await todo.get()) is not None:
                response, key = await self._respond(Request(sample.messages, self.settings),
                                                    stats)
                answered.put_nowait((sample, response, key))

        async def write() -> None:
            while (item := await answered.get()) is not None:
                self._record(*item, scorer, stats, progress)

        async with asyncio.TaskGroup() as group:
            group.create_task(produce())
            writer = group.create_task(write())
            await asyncio.gather(*(group.create_task(work()) for _ in range(self.concurrency)))
            answered.put_nowait(None)
            await writer
        return stats

    def _record(self, sample: Sample, response: Response, key: str | None, scorer: Scorer,
                stats: RunStats, progress: RunProgress) -> None:
        """Score, journal and cache one answer (the journal line is the sample's commit)."""
        # Built from our own typed parts: no need to validate again.
        record = Record.model_construct(id=sample.id, group=sample.group, target=sample.target,
                                        response=response, metadata=sample.metadata,
                                        prompt=sample.prompt_summary(), parsed={}, scores={})
        if response.ok:
            record.parsed, record.scores = scorer(sample, response.text or "")
            stats.prompt_tokens += response.prompt_tokens or 0
            stats.completion_tokens += response.completion_tokens or 0
        else:
            stats.errors += 1
            log.debug("sample %s failed: %s", sample.id, response.error)
        self.store.append(record)
        if key is not None and not response.cached:
            self.cache.put(key, response)
        stats.finished += 1
        progress.advance(error=not response.ok)

    async def _respond(self, request: Request, stats: RunStats) -> tuple[Response, str | None]:
        """The cached answer, or the backend's (with retries); and the cache key, if any."""
        if self.cache is None:
            stats.sent += 1
            return await generate(self.backend, request, self.policy), None
        key = cache_key(self.backend.identity(), request)
        hit = self.cache.get(key)
        if hit is not None:
            stats.cache_hits += 1
            return hit, key
        stats.sent += 1
        return await generate(self.backend, request, self.policy), key
