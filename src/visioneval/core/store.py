"""The run directory: run.json, samples.jsonl (append-only journal), metrics and tables.

Each finished sample is one line, written with a single unbuffered write the moment it
finishes, so a run killed at any instant (SIGKILL included) loses at most the samples in
flight; `--resume` reads the journal back and skips what is done.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from visioneval.core.records import Record
from visioneval.core.runfiles import RUN_FORMAT as RUN_FORMAT  # the store's format
from visioneval.core.runfiles import (
    Metrics,
    MetricsModel,
    RunFileError,
    RunInfo,
    check_metrics,
    parse_run_info,
)
from visioneval.core.runfiles import run_format as run_format
from visioneval.io.disk import free_space

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

RUN_FILE = "run.json"
SAMPLES_FILE = "samples.jsonl"
METRICS_FILE = "metrics.json"
LOCK_FILE = ".lock"
LOCK_TRIES, LOCK_WAIT_S = 5, 0.01  # RunLock.acquire's tries, waiting out a reader's probe


_ID = re.compile(rb'^\{"id":("(?:[^"\\]|\\.)*")')
"""The id at the start of a journal line (`Record.model_dump_json` writes it first)."""


def record_id(line: bytes) -> str | None:
    """The sample id of a journal line without parsing the record; None if the line does
    not start with one."""
    match = _ID.match(line)
    if match is None:
        return None
    try:
        value = orjson.loads(match.group(1))
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None


class RunDirError(Exception):
    """The run directory cannot be created or resumed."""


class WriteError(RunDirError):
    """A file of the run could not be written (a full disk, most often). What was written
    before stays: the journal's earlier lines, the previous run.json and metrics.json."""

    def __init__(self, path: Path, error: OSError):
        self.path = path
        super().__init__(f"cannot write {path}: {error.strerror or error}{free_space(path)}; "
                         "what was recorded before is kept")




def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same folder and rename, so a reader (or a process
    killed mid-write, or a full disk) never leaves half a file: the target is the old file
    or the new one. The temporary name is unique, so two writers of one target never share
    it. A failed write is a WriteError naming the file and the free space."""
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise WriteError(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            # mkstemp makes the file private (0600); keep the target's mode, or the usual 0644.
            os.fchmod(fh.fileno(), path.stat().st_mode & 0o7777 if path.exists() else 0o644)
            fh.write(data)
        os.replace(name, path)
    except OSError as exc:
        Path(name).unlink(missing_ok=True)
        raise WriteError(path, exc) from None
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any, default: Any = None) -> None:
    """Indented JSON, atomically; `default` converts types orjson does not know."""
    write_atomic(path, orjson.dumps(obj, default=default,
                                    option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
                 + b"\n")


def ensure_directory(directory: Path) -> None:
    """Create a run directory; a path that is a file (or under one) is a RunDirError."""
    if directory.exists() and not directory.is_dir():
        raise RunDirError(f"--out {directory} is a file, not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirError(f"cannot create the run directory {directory}: "
                          f"{exc.strerror or exc}") from None


class RunLock:
    """One process per run directory: an exclusive `flock` on `<dir>/.lock`, held for the
    session. The OS releases it when the process ends, however it ends (SIGKILL included),
    so a stale lock never blocks a resume."""

    def __init__(self, directory: Path):
        self.directory = directory
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock (no-op if held); RunDirError naming the holder if it is taken."""
        if self._fd is not None:
            return
        ensure_directory(self.directory)
        path = self.directory / LOCK_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise RunDirError(f"cannot lock the run directory {self.directory}: "
                              f"{exc.strerror or exc}") from None
        for attempt in range(LOCK_TRIES):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if attempt + 1 < LOCK_TRIES:  # a reader's probe (`holder`) lasts an instant
                    time.sleep(LOCK_WAIT_S)
                    continue
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise RunDirError(f"{self.directory} is in use by another visioneval process "
                                  f"(pid {holder})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    @staticmethod
    def holder(directory: Path) -> str | None:
        """The pid written by the process that holds the run's lock (what it wrote, or "?"),
        or None when no process holds it. Nothing is created or written: a shared lock is
        tried for an instant (a process taking the lock then waits it out, `LOCK_TRIES`)."""
        try:
            fd = os.open(directory / LOCK_FILE, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None  # never locked (or unreadable: nothing to tell)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        except OSError:
            return None
        finally:
            os.close(fd)  # closing drops the shared lock, if it was taken
        return None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class RunStore:
    """A run directory: run.json as a `RunInfo` (the store is its one reader and writer),
    the journal and metrics.json."""

    def __init__(self, directory: Path, info: RunInfo, written_format: int = RUN_FORMAT):
        self.directory = directory
        self.info = info
        self.written_format = written_format
        """The run_format run.json had when it was read (1: from before the field); `info`
        is always of the current format (`runfiles.migrate`)."""
        self._journal: BinaryIO | None = None
        self._said: set[str] = set()  # what reading the journal warned about, said once

    def _warn_once(self, message: str) -> None:
        """A warning about the journal, once per store however often it is read (a command
        reads it several times: the latest lines, then the records)."""
        if message not in self._said:
            self._said.add(message)
            log.warning("%s", message)

    @classmethod
    def create(cls, directory: Path, info: RunInfo) -> RunStore:
        ensure_directory(directory)
        if (directory / SAMPLES_FILE).exists():
            raise RunDirError(f"{directory} already holds a run; continue it with "
                              f"--resume {directory} or choose another --out")
        store = cls(directory, info)
        store.save_info()
        return store

    @classmethod
    def open(cls, directory: Path) -> RunStore:
        """The run in `directory`, run.json migrated to the current format and validated; a
        RunDirError of one line naming the file (and the field) when it is not a run."""
        path = directory / RUN_FILE
        if not path.is_file():
            raise RunDirError(f"{directory} is not a run directory (no {RUN_FILE})")
        try:
            info, written = parse_run_info(path.read_bytes())
        except RunFileError as exc:
            raise RunDirError(f"{path}: {exc}") from None
        return cls(directory, info, written)

    def save_info(self) -> None:
        write_atomic(self.directory / RUN_FILE, self.info.to_json())

    def read_metrics(self, model: MetricsModel = Metrics) -> dict[str, Any]:
        """metrics.json, checked against the benchmark's `model` of it; a RunDirError of one
        line when it is missing or not what the model describes."""
        path = self.directory / METRICS_FILE
        if not path.exists():
            raise RunDirError(f"{self.directory} has no {METRICS_FILE} yet (is the run still "
                              "starting?)")
        try:
            return check_metrics(orjson.loads(path.read_bytes()), model)
        except orjson.JSONDecodeError as exc:
            raise RunDirError(f"{path}: not valid JSON ({exc})") from None
        except ValueError as exc:
            raise RunDirError(f"{path}: {exc}") from None

    def write_metrics(self, metrics: dict[str, Any], model: MetricsModel = Metrics) -> Path:
        """metrics.json (atomically), once `model` says the benchmark's summary is what it
        describes (a ValueError naming the field otherwise: nothing is written)."""
        try:
            check_metrics(metrics, model)
        except ValueError as exc:
            raise ValueError(f"{self.directory / METRICS_FILE}: the benchmark's metrics are "
                             f"not what its model describes: {exc}") from None
        return self.write_json(METRICS_FILE, metrics)

    def append(self, record: Record) -> None:
        """One journal line, in one unbuffered write. A write that fails (a full disk) is a
        WriteError; a torn line it may leave is set aside by every reader."""
        try:
            if self._journal is None:
                self._journal = self._open_journal()
            self._journal.write(record.model_dump_json().encode() + b"\n")
        except OSError as exc:
            raise WriteError(self.directory / SAMPLES_FILE, exc) from None

    def _open_journal(self) -> BinaryIO:
        """Open for appending, on a fresh line: a torn last line (killed mid-write) becomes a
        line of its own, which readers set aside, instead of the start of the next record."""
        journal = open(self.directory / SAMPLES_FILE, "ab", buffering=0)  # noqa: SIM115
        if journal.tell() > 0:
            with open(self.directory / SAMPLES_FILE, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    journal.write(b"\n")
        return journal

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    def iter_lines(self) -> Iterator[tuple[int, bytes]]:
        """(line number, line) for every complete journal line, read as a stream; reading
        never writes. A torn last line (killed mid-write) is set aside with a warning: its
        sample runs again on --resume."""
        path = self.directory / SAMPLES_FILE
        if not path.exists():
            return
        with open(path, "rb") as fh:
            for number, line in enumerate(fh, 1):
                if not line.endswith(b"\n"):
                    self._warn_once(f"{path}: incomplete last line ({len(line)} bytes, left by "
                                    "an interrupted write) set aside; its sample runs again "
                                    "on --resume")
                    return
                if line.strip():
                    yield number, line

    def _parse(self, number: int, line: bytes) -> Record | None:
        try:
            return Record.model_validate_json(line)
        except ValueError as exc:
            self._warn_once(f"{self.directory / SAMPLES_FILE} line {number}: not a valid "
                            f"record, ignored ({str(exc).splitlines()[0]})")
            return None

    def iter_records(self) -> Iterator[Record]:
        """Every valid journal record in order, streamed; a corrupt line is reported and
        skipped."""
        for number, line in self.iter_lines():
            if (record := self._parse(number, line)) is not None:
                yield record

    def records(self) -> list[Record]:
        """Every journal record in order, in memory: for small runs and tests only."""
        return list(self.iter_records())

    def latest_lines(self) -> np.ndarray:
        """A flag per journal line number: whether it holds its sample's last record. Reads
        only the ids (a short parse of each line's start) and keeps 16-byte digests of them
        (`idset`), so its cost is a few bytes a line, not a dict of ids."""
        import numpy as np  # only when a journal is read: the CLI starts without numpy

        # with numpy, when a journal is read
        from visioneval.core.idset import DIGEST_BYTES, digest, last_occurrences

        numbers: list[int] = []

        def digests() -> Iterator[bytes]:
            for number, line in self.iter_lines():
                sample_id = record_id(line)
                if sample_id is None:  # not our writer's layout: parse it whole
                    record = self._parse(number, line)
                    if record is None:
                        continue
                    sample_id = record.id
                numbers.append(number)
                yield digest(sample_id)

        found = np.fromiter(digests(), dtype=f"S{DIGEST_BYTES}")
        lines = np.asarray(numbers, dtype=np.int64)
        del numbers[:]
        wanted = np.zeros(int(lines.max()) + 1 if len(lines) else 0, dtype=bool)
        wanted[lines[last_occurrences(found)]] = True
        return wanted

    def iter_latest(self) -> Iterator[Record]:
        """One record per sample id, the last one written (a retried error is superseded),
        in journal order and streamed: memory holds a flag per line, never the records."""
        wanted = self.latest_lines()
        for number, line in self.iter_lines():
            if number < len(wanted) and wanted[number] and \
                    (record := self._parse(number, line)) is not None:
                yield record

    def latest_records(self) -> list[Record]:
        """`iter_latest` in memory: for small runs and tests only."""
        return list(self.iter_latest())

    def write_json(self, name: str, obj: Any) -> Path:
        path = self.directory / name
        write_json(path, obj)
        return path

    def write_text(self, name: str, text: str) -> Path:
        path = self.directory / name
        write_atomic(path, text.encode())
        return path
