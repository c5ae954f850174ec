"""What a `--batch` run keeps about its batches, so that no request is sent twice and no
sample waits in memory for its answer.

Every batch is written down before it is created: its samples go to `batches/<key>.ids`
in the run directory (one JSON object a line: what the record needs of each, without its
images) and an entry with status "submitting" to run.json's `batch.batches`; only then is
the provider asked. When the provider's id comes back it is recorded at once
("submitted"). A process killed between the two leaves a "submitting" entry: the next
session asks the provider for a batch carrying that key (`BatchClient.find`) and takes it
over, or, if there is none, marks the entry "lost" and sends its samples again. Once a
batch's answers are in the journal its entry is "collected".
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from visioneval.core.records import Sample
from visioneval.core.runfiles import BatchEntry, BatchRun, BatchStatus
from visioneval.core.store import RunStore, WriteError

IDS_DIR = "batches"
OPEN = ("submitting", "submitted")


@dataclass(slots=True)
class SentSample(Sample):
    """A sample whose request is in a batch, without its images: what the record and the
    cache need of the prompt, taken before the images go."""

    summary: list[dict[str, Any]] = field(default_factory=list)
    cache_key: str | None = None

    @classmethod
    def of(cls, sample: Sample, cache_key: str | None) -> SentSample:
        return cls(sample.id, sample.group, (), sample.target, sample.metadata,
                   epoch=sample.epoch, summary=sample.prompt_summary(), cache_key=cache_key)

    def prompt_summary(self) -> list[dict[str, Any]]:
        return self.summary


@dataclass(frozen=True, slots=True)
class SampleLine:
    """One line of a batch's samples file: the sample's id, and the sample as it was sent
    (None: the line holds the id only, and the sample is taken from the data as a session
    reads it; see `SamplesFile.add`)."""

    id: str
    sample: SentSample | None


class SamplesFile:
    """A batch's samples file as its requests are encoded, one line a sample, under a
    temporary name beside the others until `BatchLedger.intend` gives it its own."""

    def __init__(self, folder: Path):
        folder.mkdir(exist_ok=True)
        try:
            fd, name = tempfile.mkstemp(dir=folder, prefix=".batch.", suffix=".ids.tmp")
        except OSError as exc:
            raise WriteError(folder, exc) from None
        self.path = Path(name)
        self._file: IO[bytes] = os.fdopen(fd, "wb")
        os.fchmod(fd, 0o644)  # as every file of the run (mkstemp makes it private)
        self.count = 0

    def add(self, sample: Sample, cache_key: str | None) -> SentSample | None:
        """Write `sample`'s line. None: the line holds it; else its target or metadata
        would come back from JSON changed (a tuple as a list, a set, a date), only its id
        is written, and the caller keeps the sample returned until its answer comes."""
        sent = SentSample.of(sample, cache_key)
        line = _encode(sent)
        try:
            self._file.write((line or orjson.dumps({"id": sample.id})) + b"\n")
        except OSError as exc:
            raise WriteError(self.path, exc) from None
        self.count += 1
        return None if line is not None else sent

    def close(self) -> None:
        try:
            self._file.close()
        except OSError as exc:
            raise WriteError(self.path, exc) from None

    def discard(self) -> None:
        """A batch never sent: its file goes."""
        self._file.close()
        self.path.unlink(missing_ok=True)


def _encode(sample: SentSample) -> bytes | None:
    """The sample's JSON line, or None if its target or metadata do not survive JSON."""
    fields = {"id": sample.id, "group": sample.group, "target": sample.target,
              "metadata": sample.metadata, "prompt": sample.summary,
              "cache_key": sample.cache_key}
    try:
        line = orjson.dumps(fields)
    except TypeError:  # orjson.JSONEncodeError: a value JSON has no form for
        return None
    back = orjson.loads(line)
    if back["target"] != sample.target or back["metadata"] != sample.metadata:
        return None
    return line


class BatchLedger:
    """run.json's `batch` block and the samples files beside it, for one run directory."""

    def __init__(self, store: RunStore, provider: str, discount: float):
        self.store = store
        info = store.info
        if info.batch is None:
            info.batch = BatchRun(provider=provider, discount=discount)
            store.save_info()
        self.run: BatchRun = info.batch

    @property
    def folder(self) -> Path:
        return self.store.directory / IDS_DIR

    def open_entries(self) -> list[BatchEntry]:
        """The batches whose answers are not in the journal yet (oldest first)."""
        return [e for e in self.run.batches if e.status in OPEN]

    @staticmethod
    def new_key() -> str:
        """A batch's key, chosen before its requests are written (they carry it)."""
        return "b" + secrets.token_hex(8)

    def new_samples(self) -> SamplesFile:
        return SamplesFile(self.folder)

    def intend(self, key: str, samples: SamplesFile) -> BatchEntry:
        """Record a batch about to be created: its samples file first, then its entry."""
        samples.close()
        path = self.folder / f"{key}.ids"
        try:
            os.replace(samples.path, path)
        except OSError as exc:
            raise WriteError(path, exc) from None
        entry = BatchEntry(key=key, provider=self.run.provider, submitted_at=_now(),
                           requests=samples.count, status="submitting")
        self.run.batches = [*self.run.batches, entry]  # assigned: written to run.json
        self.store.save_info()
        return entry

    def number(self, entry: BatchEntry) -> int:
        """The batch's number in the run, from 1 in the order the run sent its batches
        (its place in run.json's list, so a run written before numbers were shown has
        them too)."""
        return next(i for i, e in enumerate(self.run.batches, 1) if e.key == entry.key)

    def name(self, entry: BatchEntry) -> str:
        """The batch as lines name it: `batch 2`, with the provider's id once it has one."""
        number = self.number(entry)
        return f"batch {number} ({entry.id})" if entry.id else f"batch {number}"

    def created(self, entry: BatchEntry, batch_id: str) -> None:
        entry.id = batch_id
        self.settle(entry, "submitted")

    def settle(self, entry: BatchEntry, status: BatchStatus) -> None:
        entry.status = status
        self.store.save_info()

    def samples(self, entry: BatchEntry) -> Iterator[SampleLine]:
        """The samples `entry` holds, in order, read a line at a time. A line is a JSON
        object (the sample, or its id alone) or, in a file written before visioneval kept
        the samples in it, a JSON string (the id): both are read."""
        path = self.folder / f"{entry.key}.ids"
        try:
            with open(path, "rb") as fh:
                for number, line in enumerate(fh, 1):
                    if line.strip():
                        yield _sample_line(line, path, number)
        except OSError as exc:
            raise ValueError(f"{path}: cannot read the samples of batch "
                             f"{entry.id or entry.key} ({exc.strerror})") from None


def _sample_line(line: bytes, path: Path, number: int) -> SampleLine:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"{path} line {number}: not JSON ({exc})") from None
    if isinstance(value, str):
        return SampleLine(value, None)
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        if "group" not in value:
            return SampleLine(value["id"], None)
        group, metadata = value["group"], value.get("metadata")
        prompt, key = value.get("prompt"), value.get("cache_key")
        if isinstance(group, str) and isinstance(metadata, dict) and \
                isinstance(prompt, list) and (key is None or isinstance(key, str)):
            return SampleLine(value["id"], SentSample(
                value["id"], group, (), value.get("target"), metadata, summary=prompt,
                cache_key=key))
    raise ValueError(f"{path} line {number}: not a sample of the batch (a JSON object with "
                     "its id, group, target, metadata, prompt and cache_key, or its id)")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def submitted_epoch(entry: BatchEntry) -> float:
    """When `entry` was written down, as a Unix time (0 when the record is unreadable)."""
    try:
        return dt.datetime.fromisoformat(entry.submitted_at).timestamp()
    except ValueError:
        return 0.0
