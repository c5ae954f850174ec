"""The run directory: run.json, samples.jsonl (append-only journal), metrics and tables.

Each finished sample is one line, written with a single unbuffered write the moment it
finishes, so a run killed at any instant (SIGKILL included) loses at most the samples in
flight; `--resume` reads the journal back and skips what is done.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import orjson

from visioneval.records import Record

log = logging.getLogger(__name__)

RUN_FILE = "run.json"
SAMPLES_FILE = "samples.jsonl"


class RunDirError(Exception):
    """The run directory cannot be created or resumed."""


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file and rename, so a reader never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_json(path: Path, obj: Any, default: Any = None) -> None:
    """Indented JSON, atomically; `default` converts types orjson does not know."""
    write_atomic(path, orjson.dumps(obj, default=default,
                                    option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
                 + b"\n")


class RunStore:
    def __init__(self, directory: Path, info: dict[str, Any]):
        self.directory = directory
        self.info = info
        self._journal = None

    @classmethod
    def create(cls, directory: Path, info: dict[str, Any]) -> RunStore:
        if (directory / SAMPLES_FILE).exists():
            raise RunDirError(f"{directory} already holds a run; continue it with "
                              f"--resume {directory} or choose another --out")
        directory.mkdir(parents=True, exist_ok=True)
        store = cls(directory, info)
        store.save_info()
        return store

    @classmethod
    def open(cls, directory: Path) -> RunStore:
        path = directory / RUN_FILE
        if not path.is_file():
            raise RunDirError(f"{directory} is not a run directory (no {RUN_FILE})")
        try:
            info = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError as exc:
            raise RunDirError(f"{path}: not valid JSON ({exc})") from None
        return cls(directory, info)

    def save_info(self) -> None:
        write_json(self.directory / RUN_FILE, self.info)

    def append(self, record: Record) -> None:
        if self._journal is None:
            self._journal = open(self.directory / SAMPLES_FILE, "ab", buffering=0)  # noqa: SIM115
        self._journal.write(record.model_dump_json().encode() + b"\n")

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    def records(self) -> list[Record]:
        """Every journal line in order. A torn last line (killed mid-write) is cut off the
        file so appends continue cleanly; a corrupt line elsewhere is reported and skipped."""
        path = self.directory / SAMPLES_FILE
        if not path.exists():
            return []
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            log.warning("%s: dropping a torn last line (%d bytes) left by an interrupted write",
                        path, len(data) - keep)
            with open(path, "r+b") as fh:
                fh.truncate(keep)
            data = data[:keep]
        out = []
        for number, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append(Record.model_validate_json(line))
            except ValueError as exc:
                log.warning("%s line %d: not a valid record, ignored (%s)", path, number,
                            str(exc).splitlines()[0])
        return out

    def latest_records(self) -> list[Record]:
        """One record per sample id: the last one written (a retried error is superseded)."""
        latest: dict[str, Record] = {}
        for record in self.records():
            latest[record.id] = record
        return list(latest.values())

    def write_json(self, name: str, obj: Any) -> Path:
        path = self.directory / name
        write_json(path, obj)
        return path

    def write_text(self, name: str, text: str) -> Path:
        path = self.directory / name
        write_atomic(path, text.encode())
        return path
