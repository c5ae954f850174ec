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
        """Run every sample not in `done`, at most `concurrency` at a time; `stats` is
        updated as samples finish, so an interrupted session still knows what it did."""
        slots = asyncio.Semaphore(self.concurrency)
        tasks: set[asyncio.Task] = set()
        crashed: list[BaseException] = []

        def finished(task: asyncio.Task) -> None:
            tasks.discard(task)
            slots.release()
            if not task.cancelled() and task.exception() is not None:
                crashed.append(task.exception())

        try:
            for item in samples:
                if crashed:
                    break  # a bug in scoring: stop scheduling, keep what is journaled
                if isinstance(item, SkippedRow):
                    log.warning(item.line())
                    stats.skipped += 1
                    stats.skipped_rows.append({"group": item.group, "row": item.row,
                                               "reason": item.reason})
                    progress.skip()
                    continue
                if item.id in done:
                    stats.resumed += 1
                    continue
                await slots.acquire()
                task = asyncio.create_task(self._one(item, scorer, stats, progress))
                tasks.add(task)
                task.add_done_callback(finished)
            await asyncio.gather(*tasks)
        finally:
            for task in list(tasks):
                task.cancel()
        if crashed:
            raise crashed[0]
        return stats

    async def _one(self, sample: Sample, scorer: Scorer, stats: RunStats,
                   progress: RunProgress) -> None:
        request = Request(sample.messages, self.settings)
        response = await self._respond(request, stats)
        record = Record(id=sample.id, group=sample.group, target=sample.target,
                        response=response, metadata=sample.metadata,
                        prompt=sample.prompt_summary())
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
