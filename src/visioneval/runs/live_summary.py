"""The run's metrics read from its journal while answers still arrive.

At its end a session streams the journal once into the benchmark's `summarize`: read,
parse, tally; for 1000 SalBench records ~30 ms after the last answer, the whole command
waiting. Here a worker thread does it as the journal grows: it tails samples.jsonl itself
(the same bytes, parsed by the same parser, in journal order) into one `summarize`, which
runs to its end once the last answer is in. The benchmark contract's `summarize` is
computed from the records alone, so when it runs does not change what it gives.

Its numbers are used only where they are certainly those the journal streamed at the end
would give (`session.finish`): a session that starts on an empty journal (a new run), on
the request-by-request path, that finished with the data read to its end; every line a
valid record and one of this session's, no sample id twice (every line is then its
sample's latest), every id one of the data's (nothing for `NotInData` to leave out), every
record read by `summarize`, and the thread did not raise. Anything else, and its work is
dropped without a word (a debug line says why) and the journal is streamed at the end as
before; a killed run leaves nothing behind, and its resumed session reads the journal the
usual way.

A thread that holds the GIL makes the event loop wait for it, up to the interpreter's
switch interval (5 ms) at a time. So the thread reads only when the loop is quiet
(`engine.quiet`: between two waves of answers), about a millisecond's work at a time, and
the rest once the last answer is in. Memory: what `summarize` keeps, and 16 bytes a record
(the ids' digests, checked at the end)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from visioneval.core.benchmark import Benchmark
from visioneval.core.idset import all_distinct, digest
from visioneval.core.records import Record, Sample
from visioneval.core.store import record_id
from visioneval.engine.quiet import QuietMoments
from visioneval.engine.runner import RecordWatch
from visioneval.epochs.family import Repeated
from visioneval.variants.family import Varied

if TYPE_CHECKING:
    from visioneval.core.idset import IdSet
    from visioneval.epochs.summary import EpochsSummary
    from visioneval.variants.summary import VariantsSummary

log = logging.getLogger(__name__)

BATCH_S = 0.001
"""The thread's work in one quiet moment (then it waits for the next): a SalBench record
read, parsed and tallied takes ~30 microseconds."""


@dataclass
class Tally:
    """Counts records as the benchmark's `summarize` streams through them."""

    records: int = 0
    errors: int = 0
    reasoning: int = 0  # answers whose reasoning was set aside before parsing

    def count(self, records: Iterable[Record]) -> Iterator[Record]:
        for record in records:
            self.records += 1
            self.errors += not record.ok
            self.reasoning += record.response.reasoning is not None
            yield record


@dataclass(frozen=True)
class Summary:
    """What one pass over the records gives: metrics.json, variants.json (a run with
    --variant), the counts of run.json and epochs.json (a run with --epochs)."""

    metrics: dict[str, Any]
    variants: VariantsSummary | None
    tally: Tally
    epochs: EpochsSummary | None = None


def summary_of(benchmark: Benchmark, records: Iterable[Record]) -> Summary:
    """The benchmark's summary of `records`, streamed once, counted on the way."""
    tally = Tally()
    counted = tally.count(records)
    if isinstance(benchmark, Repeated):
        metrics, variants, epochs = benchmark.summarize_all(counted)
        return Summary(metrics, variants, tally, epochs)
    if isinstance(benchmark, Varied):
        metrics, variants = benchmark.summarize_with_variants(counted)
        return Summary(metrics, variants, tally)
    return Summary(benchmark.summarize(counted), None, tally)


class RecordReader(Protocol):
    """More work of the run's end that reads the journal's records (the report page's
    browser rows): told of each record the live summary's thread reads, in journal order,
    and `whole` once those were every record of the journal (its summary is used). It runs
    in that thread; if it raises, it is told of no more records and never `whole`."""

    def add(self, record: Record) -> None: ...

    def whole(self) -> None: ...


class _Stop(BaseException):
    """Ends the thread's reading: its numbers will not be used (`LiveSummary._why`). Not an
    Exception, so that a `summarize` that catches those does not go on with part of the
    records."""


class LiveSummary:
    """Told of each record as it is journaled (`watching`); `result` once the session has
    finished, or `abandon` if it ends otherwise. `journal`: the session's samples.jsonl,
    empty or absent when the session starts; `readers`: told of each record too."""

    def __init__(self, benchmark: Benchmark, journal: Path,
                 readers: Sequence[RecordReader] = ()):
        self._benchmark = benchmark
        self._path = journal
        self._readers = list(readers)
        self._turn = threading.Condition()
        self._granted = False  # the thread may read a batch
        self._final = False  # ... or the rest of the journal
        self._abandoned = False
        self._busy = False  # a batch was handed to the thread and is not done
        self._appended = 0  # records journaled (counted in the event loop)
        self._read = 0  # records the thread has read
        self._read_to_end = False
        self._digests = bytearray()
        self._why: str | None = None  # why its numbers cannot be used
        self._summary: Summary | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._quiet = QuietMoments(self._step)

    def watching(self, then: RecordWatch | None = None) -> RecordWatch:
        """The engine's record watch: this summary told first, then `then`."""
        def recorded(sample: Sample, record: Record) -> None:
            self._appended += 1
            self._quiet.answered()
            if then is not None:
                then(sample, record)
        return recorded

    @property
    def records_read(self) -> int:
        """Records the thread has read so far."""
        return self._read

    # -- in the event loop ------------------------------------------------------------------
    def _step(self) -> bool:
        """The loop is quiet: a batch for the thread, if it is idle and records wait. The
        thread asks for the next check when it is done (`_batch_done`)."""
        if self._busy or self._read >= self._appended or self._why is not None:
            return False
        self._busy = True
        if self._thread is None:
            self._loop = asyncio.get_running_loop()
            self._granted = True
            self._thread = threading.Thread(target=self._run, name="live-summary",
                                            daemon=True)
            self._thread.start()
        else:
            with self._turn:
                self._granted = True
                self._turn.notify()
        return False

    def result(self, data_ids: IdSet) -> Summary | None:
        """The summary of every record, once the thread has read the rest of the journal;
        None if its numbers may not be the ones the journal streamed now would give
        (`data_ids`: the ids of the samples in the run's data, read to its end)."""
        self._quiet.stop()
        if self._thread is None:  # never quiet: nothing read yet, the journal is read now
            return None
        try:
            with self._turn:
                self._final = True
                self._turn.notify()
            self._thread.join()
        finally:
            self.abandon()  # interrupted while waiting: the thread stops at its next record
        summary = self._summary
        digests = bytes(self._digests)
        if summary is not None and summary.tally.records != self._appended:
            self._why = "samples.jsonl holds other lines than this session's records"
        elif summary is not None and not all_distinct(digests):
            self._why = "a sample id appears twice in samples.jsonl"
        elif summary is not None and not data_ids.holds_all(digests):
            self._why = "samples.jsonl holds records of samples not in the run's data"
        if self._why is not None or summary is None:
            log.debug("metrics read from samples.jsonl after the run (read during it: %s)",
                      self._why or "no summary")
            return None
        log.debug("metrics of %d records read from samples.jsonl while answers arrived",
                  summary.tally.records)
        for reader in self._readers:
            reader.whole()
        return summary

    def abandon(self) -> None:
        """The session ended otherwise: the thread stops at its next record (a daemon: it
        never holds the process)."""
        self._quiet.stop()
        with self._turn:
            self._abandoned = True
            self._turn.notify()

    # -- in the thread --------------------------------------------------------------------
    def _run(self) -> None:
        try:
            summary = summary_of(self._benchmark, self._records())
            if self._why is None and not self._read_to_end:
                self._why = "the benchmark's summary did not read every record"
            self._summary = summary
        except _Stop:
            pass
        except Exception as exc:  # the journal's own pass raises it again, in the session
            self._why = f"the summary raised {type(exc).__name__}: {exc}"

    def _records(self) -> Iterator[Record]:
        """The journal's records as `RunStore.iter_latest` parses them, each id noted."""
        for line in self._lines():
            if not line.strip():
                continue
            try:
                record = Record.model_validate_json(line)
            except ValueError:
                self._stop("a line of samples.jsonl is not a valid record")
            found = record_id(line)
            if found is not None and found != record.id:
                self._stop("a line of samples.jsonl names another id than its record's")
            self._digests += digest(record.id)
            self._read += 1
            for reader in tuple(self._readers):
                try:
                    reader.add(record)
                except Exception as exc:  # its own pass at the end reads the journal
                    log.debug("%s stopped reading samples.jsonl: %s: %s", type(reader).__name__,
                              type(exc).__name__, exc)
                    self._readers.remove(reader)
            yield record

    def _lines(self) -> Iterator[bytes]:
        """Complete journal lines, a batch a turn (a line still being written waits for
        the next); at the end, every line left."""
        journal = None
        part = b""
        try:
            while True:
                final = self._wait_for_turn()
                until = time.perf_counter() + BATCH_S
                while final or time.perf_counter() < until:
                    if self._abandoned:
                        raise _Stop
                    if journal is None:
                        try:
                            journal = open(self._path, "rb")  # noqa: SIM115
                        except FileNotFoundError:  # nothing journaled yet
                            break
                    read = journal.readline()
                    if not read:
                        break
                    part += read
                    if not part.endswith(b"\n"):
                        break  # being written: the rest comes at a later turn
                    line, part = part, b""
                    yield line
                if final:
                    if part:
                        self._stop("the last line of samples.jsonl is incomplete")
                    self._read_to_end = True
                    return
                self._batch_done()
        finally:
            if journal is not None:
                journal.close()

    def _wait_for_turn(self) -> bool:
        """Wait until a batch is granted (False) or the rest is asked for (True)."""
        with self._turn:
            while not (self._granted or self._final or self._abandoned):
                self._turn.wait()
            if self._abandoned:
                raise _Stop
            self._granted = False
            return self._final

    def _batch_done(self) -> None:
        """Idle again; if records were journaled meanwhile, the loop is asked for the next
        quiet moment at once (else the next answer asks)."""
        self._busy = False
        if self._read < self._appended and self._loop is not None:
            # RuntimeError: the loop has closed (the session is over).
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._quiet.again)

    def _stop(self, why: str) -> NoReturn:
        self._why = why
        raise _Stop
