"""Reading a foreign JSON-lines log as a stream: one line in memory at a time, a bad line is
one warning naming the file and line and is counted, never an exception; the file's sha256
is taken on the way (run.json's provenance)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

log = logging.getLogger(__name__)

_KINDS = {str: "string", list: "list", int: "number", float: "number", bool: "boolean",
          type(None): "null"}
WARN_PER_FILE = 20
"""Bad lines warned one by one per file; the rest are counted and summed up in one line."""


@dataclass
class FileTally:
    """What reading one log file found."""

    path: Path
    lines: int = 0  # non-blank lines read
    bad: int = 0
    sha256: str = ""


@dataclass
class BadLines:
    """Counts bad lines per file; warns for the first WARN_PER_FILE of each."""

    files: dict[Path, FileTally] = field(default_factory=dict)

    def tally(self, path: Path) -> FileTally:
        return self.files.setdefault(path, FileTally(path))

    def report(self, path: Path, line: int, why: str) -> None:
        tally = self.tally(path)
        tally.bad += 1
        if tally.bad <= WARN_PER_FILE:
            log.warning("%s line %d: %s; line skipped", path, line, why)
        elif tally.bad == WARN_PER_FILE + 1:
            log.warning("%s: more bad lines; the rest are counted, not shown", path)

    @property
    def total(self) -> int:
        return sum(t.bad for t in self.files.values())


def json_lines(path: Path, bad: BadLines) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every line of `path` that holds a JSON object; blank lines
    are passed over, any other line is reported to `bad`."""
    tally = bad.tally(path)
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for number, line in enumerate(fh, 1):
            digest.update(line)
            if not line.strip():
                continue
            tally.lines += 1
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                torn = "" if line.endswith(b"\n") else " (the file ends mid-line)"
                bad.report(path, number, f"not JSON{torn}: {str(exc).splitlines()[0]}")
                continue
            if not isinstance(value, dict):
                bad.report(path, number, f"a JSON {_KINDS.get(type(value), 'value')}, not an "
                           "object")
                continue
            yield number, value
    tally.sha256 = digest.hexdigest()
