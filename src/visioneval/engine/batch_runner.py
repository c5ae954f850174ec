"""A run's samples through the provider's batch API (`--batch`) instead of one request each.

The samples are read as usual: a sample done in an earlier session is skipped, a cached
answer is recorded at once, the rest are encoded into batches under the provider's limits
(requests and bytes), each written down before it is created (`BatchLedger`). Batches left
open by an earlier session are taken up again first, and their samples are not sent again.
Each batch is polled until it ends; its answers go through the engine's own recording
(`Engine._record`: scoring, journal, counts, progress) and into the response cache, and a
request the provider answered with an error, or never answered (an expired batch), becomes
an error record, sent again in a new batch by the next `--resume`.

Nothing is kept in memory per sample while the batches are in flight, though they may hold
every sample of the data: what a record needs of a sample is in its batch's samples file,
read back line by line when the batch ends, and the answers are read into a file of their
own (`BatchAnswers`). The samples of batches taken up are known by 16-byte digests (`IdSet`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Container, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from visioneval.backends.batch.base import (
    BATCH_DISCOUNT,
    BatchAnswers,
    BatchClient,
    BatchFailure,
    BatchState,
    checked_id,
    custom_id,
    error_answer,
)
from visioneval.core.idset import IdSet, digest
from visioneval.core.records import Request, Sample, SkippedRow
from visioneval.core.runfiles import BatchEntry
from visioneval.core.solver import Solved
from visioneval.core.store import WriteError
from visioneval.engine.batch_ledger import BatchLedger, SamplesFile, SentSample, submitted_epoch
from visioneval.engine.cache import cache_key
from visioneval.engine.progress import RunProgress
from visioneval.engine.runner import Engine, RunStats, RunStopped, Scorer

log = logging.getLogger(__name__)

FIRST_POLL_S = 0.5
LONGEST_POLL_S = 60.0
"""Polls start after half a second and slow down by half each time to once a minute: a
small batch on a quiet provider is read within seconds, a day-long one costs ~1,500 polls."""
READ_AT_ONCE = 4
"""Ended batches whose answers are read at once: each holds a file open and 24 bytes an
answer until they are recorded (an image-heavy run may have a thousand batches end together)."""
CALL_ATTEMPTS = 8
"""Tries of a submit or a results download that fails for a reason that may pass (a dropped
connection, HTTP 429 or 5xx); a poll is tried again without limit, slower and slower."""


@dataclass
class BatchSetup:
    """What a `--batch` session needs beside the engine: the provider's client, and where
    its batches' progress is said (one line per change)."""

    client: BatchClient
    say: Callable[[str], None] = field(default=lambda line: None)
    first_poll_s: float = FIRST_POLL_S
    longest_poll_s: float = LONGEST_POLL_S

    async def run(self, engine: Engine, samples: Iterable[Sample | SkippedRow],
                  scorer: Scorer, progress: RunProgress, done: Container[str],
                  stats: RunStats) -> RunStats:
        return await _BatchRun(self, engine, scorer, progress, done, stats).run(samples)


@dataclass
class _Chunk:
    samples: SamplesFile  # written as the requests are encoded
    key: str = field(default_factory=BatchLedger.new_key)  # its requests' custom ids hold it
    lines: list[bytes] = field(default_factory=list)
    size: int = 0


class _BatchRun:
    """One session's batches: those taken up again and those it sends."""

    def __init__(self, setup: BatchSetup, engine: Engine, scorer: Scorer,
                 progress: RunProgress, done: Container[str], stats: RunStats):
        self.setup, self.client, self.engine = setup, setup.client, engine
        self.scorer, self.progress, self.done, self.stats = scorer, progress, done, stats
        self.ledger = BatchLedger(engine.store, self.client.provider, float(BATCH_DISCOUNT))
        # Samples whose batch's file holds their id only (see `SamplesFile.add`), by id.
        self.kept: dict[str, SentSample] = {}
        self.waiting = IdSet()  # the samples of the batches taken up
        self.from_data = IdSet()  # of those, the ones whose line holds their id only
        self._seen = bytearray()  # digests of those the data still holds, as it is read
        self.in_data = IdSet()  # the same, once the data has been read to its end
        self.read_all = asyncio.Event()
        self._reading = asyncio.Semaphore(READ_AT_ONCE)
        self.counts = {"submitted": 0, "in progress": 0, "done": 0}
        self._label = progress.description

    async def run(self, samples: Iterable[Sample | SkippedRow]) -> RunStats:
        chunk: _Chunk | None = None
        try:
            async with asyncio.TaskGroup() as group:
                taken = await self._taken_up()
                self._note_waiting(taken)
                for entry in taken:
                    group.create_task(self._collect(entry, taken=True))
                chunk = _Chunk(self.ledger.new_samples())
                for item in samples:
                    found = self._to_send(item)
                    if found is None:
                        continue
                    sample, key = found
                    settings = self.engine.settings.for_epoch(sample.epoch)
                    request = Request(sample.messages, settings)
                    line = self.client.encode(custom_id(chunk.key, sample.id), request)
                    if chunk.samples.count and self._overflows(chunk, line):
                        group.create_task(self._collect(await self._submit(chunk)))
                        chunk = _Chunk(self.ledger.new_samples())
                        line = self.client.encode(custom_id(chunk.key, sample.id), request)
                    kept = chunk.samples.add(sample, key)
                    if kept is not None:
                        self.kept[sample.id] = kept
                    chunk.lines.append(line)
                    chunk.size += len(line) + 1
                if chunk.samples.count:
                    group.create_task(self._collect(await self._submit(chunk)))
                self.in_data = IdSet.from_digests(bytes(self._seen))
                self._seen = bytearray()
                self.read_all.set()
                if not self.counts["submitted"] and self.stats.cache_hits:
                    self.setup.say(f"all {self.stats.cache_hits:,} answers from the cache: "
                                   "no batch sent")
        except* WriteError as failed:
            raise failed.exceptions[0] from None
        except* RunStopped as stopped:
            raise stopped.exceptions[0] from None
        except* ValueError as unreadable:  # a batch's samples file: one line naming it
            raise unreadable.exceptions[0] from None
        finally:
            if chunk is not None:  # a batch not sent leaves no file (a sent one has moved)
                chunk.samples.discard()
        return self.stats

    def _note_waiting(self, taken: list[BatchEntry]) -> None:
        """The samples of the batches taken up, by digest: none is sent again."""
        waiting, from_data = bytearray(), bytearray()
        for entry in taken:
            for line in self.ledger.samples(entry):
                key = digest(line.id)
                waiting += key
                if line.sample is None:
                    from_data += key
        self.waiting = IdSet.from_digests(bytes(waiting))
        self.from_data = IdSet.from_digests(bytes(from_data))

    def _to_send(self, item: Sample | SkippedRow) -> tuple[Sample, str | None] | None:
        """The sample (and its cache key) if it must go into a new batch; skipped rows, done
        samples, cached answers and samples in a batch taken up are dealt with here."""
        stats = self.stats
        if isinstance(item, SkippedRow):
            log.warning(item.line())
            stats.skipped += 1
            stats.skipped_rows.append({"group": item.group, "row": item.row,
                                       "reason": item.reason})
            self.progress.skip(item.samples)
            return None
        if item.id in self.done:
            stats.resumed += 1
            return None
        if self.waiting and item.id in self.waiting:
            self._seen += digest(item.id)
            if self.from_data and item.id in self.from_data:
                self.kept[item.id] = SentSample.of(item, self._key(item))
            return None
        key = self._key(item)
        hit = self.engine.cache.get(key) if key and self.engine.cache is not None and \
            self.engine.read_cache else None
        if hit is not None:
            stats.count_cache_hit(hit)
            self.engine._record(item, Solved(hit), self.scorer, stats, self.progress)
            return None
        return item, key

    def _key(self, sample: Sample) -> str | None:
        """The sample's request's key in the response cache (None: no cache)."""
        engine = self.engine
        if engine.cache is None:
            return None
        identity, _ = engine._origin(engine.backend)
        settings = engine.settings.for_epoch(sample.epoch)
        return cache_key(identity, Request(sample.messages, settings))

    def _overflows(self, chunk: _Chunk, line: bytes) -> bool:
        limits = self.client.limits
        return chunk.samples.count >= limits.max_requests or \
            chunk.size + len(line) + 1 > limits.max_bytes

    async def _taken_up(self) -> list[BatchEntry]:
        """The batches an earlier session left open, each with its provider id: a batch
        whose creation was not recorded is looked up by its key (`BatchClient.find`); not
        found, it was never made and its samples are sent again."""
        out = []
        for entry in self.ledger.open_entries():
            if entry.id is not None and \
                    isinstance(bad := checked_id(entry.id, "batch"), BatchFailure):
                # Recorded by a server that gave an id no URL may hold: never polled, so no
                # other endpoint is asked; its samples go in a new batch.
                self.setup.say(f"batch {self.ledger.number(entry)}: {bad.message}; it is "
                               "taken as lost and its samples are sent again")
                self.ledger.settle(entry, "lost")
                continue
            if entry.id is None:
                found = await self._call(partial(self.client.find, entry.key, entry.requests,
                                                 submitted_epoch(entry)),
                                         f"looking up {self.ledger.name(entry)}")
                if found is None:
                    self.setup.say(f"{self.ledger.name(entry)} ({entry.requests:,} requests) "
                                   "was never created; its samples are sent again")
                    self.ledger.settle(entry, "lost")
                    continue
                self.ledger.created(entry, found)
            self.setup.say(f"taking up {self.ledger.name(entry)}, {entry.requests:,} "
                           "requests sent by an earlier session")
            self._count("submitted", +1)
            out.append(entry)
        return out

    async def _submit(self, chunk: _Chunk) -> BatchEntry:
        entry = self.ledger.intend(chunk.key, chunk.samples)
        batch_id = await self._create(entry, chunk.lines)
        self.ledger.created(entry, batch_id)
        self.stats.sent += entry.requests
        chunk.lines.clear()  # the request bodies are the provider's now
        self._count("submitted", +1)
        self.setup.say(f"{self.ledger.name(entry)}: {entry.requests:,} requests sent to "
                       f"{self.client.destination}")
        return entry

    async def _create(self, entry: BatchEntry, lines: list[bytes]) -> str:
        """The provider's id of the batch of `lines`. A failure that may pass (a dropped
        connection, HTTP 5xx) may come after the provider made the batch: before it is
        sent again, the provider is asked for a batch with the entry's key. A refusal
        (HTTP 4xx) made none: the entry is "failed". Out of tries, the entry stays
        "submitting" and the resume asks again."""
        what = f"sending a batch of {entry.requests:,} requests"
        last = BatchFailure("no answer")
        for attempt in range(CALL_ATTEMPTS):
            if attempt:
                await asyncio.sleep(min(self.setup.longest_poll_s,
                                        self.setup.first_poll_s * 2**attempt))
                found = await self.client.find(entry.key, entry.requests,
                                               submitted_epoch(entry))
                if isinstance(found, str):
                    return found
                if isinstance(found, BatchFailure):  # not known whether it was made
                    last = found
                    continue
            result = await self.client.submit(lines, entry.key)
            if isinstance(result, str):
                return result
            if not result.transient:
                self.ledger.settle(entry, "failed")
                raise RunStopped(f"{what}: {result.message}")
            last = result
            log.info("%s: %s (trying again)", what, result.message)
        raise RunStopped(f"{what}: {last.message} ({CALL_ATTEMPTS} tries; --resume asks the "
                         "provider whether it made the batch)")

    async def _call(self, make: Callable[[], Awaitable[Any]], what: str) -> Any:
        """A batch API call, tried again while it fails for a reason that may pass; a
        failure that will not pass stops the run with its line (what is recorded stays)."""
        failure: BatchFailure | None = None
        for attempt in range(CALL_ATTEMPTS):
            result = await make()
            if not isinstance(result, BatchFailure):
                return result
            failure = result
            if not result.transient:
                break
            await asyncio.sleep(min(self.setup.longest_poll_s,
                                    self.setup.first_poll_s * 2**attempt))
        assert failure is not None
        raise RunStopped(f"{what}: {failure.message}")

    async def _collect(self, entry: BatchEntry, taken: bool = False) -> None:
        """Poll `entry`'s batch until it ends, then read and record its answers. `taken`: a
        batch an earlier session sent, recorded once the data has been read to its end
        (which of its samples the data still holds is known then); one sent by this
        session is recorded as soon as it ends."""
        assert entry.id is not None
        state = await self._wait(entry)
        if taken:
            await self.read_all.wait()
        async with self._reading:
            answers: BatchAnswers = await self._call(
                lambda: self.client.results(state, self.ledger.folder),
                f"reading the answers of {self.ledger.name(entry)}")
            try:
                self._record(entry, state, answers, taken)
            finally:
                answers.close()
        self._count("done", +1)
        self.setup.say(f"batch {self.ledger.number(entry)}: answers recorded")

    async def _wait(self, entry: BatchEntry) -> BatchState:
        """Poll until the batch ends; each new status is said, its counts logged."""
        assert entry.id is not None
        delay, status, shown = self.setup.first_poll_s, "", ""
        name, short = self.ledger.name(entry), f"batch {self.ledger.number(entry)}"
        while True:
            state = await self.client.poll(entry.id)
            if isinstance(state, BatchFailure):
                if not state.transient:
                    raise RunStopped(f"polling {name}: {state.message}")
                log.info("polling %s: %s (asking again)", name, state.message)
            else:
                if not status:
                    self._count("in progress", +1)
                if state.status != status:
                    status = state.status
                    self.setup.say(f"{short}: {status}")
                counts = f"{state.answered or 0:,} of {state.total:,} answered" \
                    if state.total else ""
                if counts != shown:
                    shown = counts
                    log.debug("%s: %s", name, counts)
                if state.ended:
                    self._count("in progress", -1)
                    return state
            await asyncio.sleep(delay)
            delay = min(self.setup.longest_poll_s, delay * 1.5)

    def _record(self, entry: BatchEntry, state: BatchState, answers: BatchAnswers,
                taken: bool) -> None:
        """Each sample of the batch's file with its answer (an error if it has none), read
        a line at a time; one done since, or (`taken`) no longer in the data, is passed."""
        engine, stats = self.engine, self.stats
        _, origin = engine._origin(engine.backend)
        missing = (f"{self.ledger.name(entry)} ended ({state.status}"
                   + (f": {state.detail}" if state.detail else "") + ") without an answer "
                   "for it")
        unanswered = 0
        for line in self.ledger.samples(entry):
            sample_id = line.id
            if sample_id in self.done or (taken and sample_id not in self.in_data):
                continue  # recorded by an earlier session, or no longer in the data
            sample = line.sample if line.sample is not None else \
                self.kept.pop(sample_id, None)
            if sample is None:
                continue  # its id only, and the data did not give it again
            response = answers.get(custom_id(entry.key, sample_id))
            if response is None:
                unanswered += 1
                response = error_answer(missing)
            stats.prompt_tokens += response.prompt_tokens or 0
            stats.completion_tokens += response.completion_tokens or 0
            stats.usage.add("model", sample.group, response)
            engine._record(sample, Solved(response), self.scorer, stats, self.progress)
            if engine.cache is not None and sample.cache_key is not None and response.ok:
                engine.cache.put(sample.cache_key, response, origin)
        if answers.conflicts:
            self.setup.say(f"{self.ledger.name(entry)} answered {answers.conflicts:,} "
                           "request(s) more than once, differently (a success and an error): "
                           "the first success of each is kept")
        if len(answers) and unanswered == entry.requests:
            self.setup.say(f"{self.ledger.name(entry)} answers none of this run's requests "
                           f"(none carries its key {entry.key}): it is another's batch; "
                           "its samples are errors, sent again on resume")
        self.ledger.settle(entry, "collected")

    def _count(self, what: str, change: int) -> None:
        self.counts[what] += change
        counts = self.counts
        self.progress.describe(f"{self._label} (batches: {counts['submitted']} sent, "
                               f"{counts['in progress']} in progress, {counts['done']} done)")
