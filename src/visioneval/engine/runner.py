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

        A producer reads and prepares samples into a queue of `concurrency` while the workers
        wait on the network, so preparing the next sample is off the critical path when a
        wave of answers arrives. A bug in scoring cancels everything (TaskGroup) and leaves
        the journal as it was."""
        queue: asyncio.Queue[Sample | None] = asyncio.Queue(maxsize=self.concurrency)

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
                    await queue.put(item)  # suspends while the queue is full
            for _ in range(self.concurrency):
                await queue.put(None)

        async def work() -> None:
            while (sample := await queue.get()) is not None:
                await self._one(sample, scorer, stats, progress)

        async with asyncio.TaskGroup() as group:
            group.create_task(produce())
            for _ in range(self.concurrency):
                group.create_task(work())
        return stats

    async def _one(self, sample: Sample, scorer: Scorer, stats: RunStats,
                   progress: RunProgress) -> None:
        request = Request(sample.messages, self.settings)
        response = await self._respond(request, stats)
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
        stats.finished += 1
        progress.advance(error=not response.ok)

    async def _respond(self, request: Request, stats: RunStats) -> Response:
        key = cache_key(self.backend.identity(), request) if self.cache else None
        if self.cache and key:
            hit = self.cache.get(key)
            if hit is not None:
                stats.cache_hits += 1
                return hit
        stats.sent += 1
        response = await generate(self.backend, request, self.policy)
        if self.cache and key:
            self.cache.put(key, response)
        return response
