"""A run's journal indexed for random access (`visioneval view`): where each sample's last
record starts, and the few fields the browser filters on, in compact arrays.

Built in two streamed passes (ids only, then one parse of each sample's last record); the
records themselves stay on disk and are read back by byte offset when a page shows them.
Memory is a few dozen bytes per sample, never the records."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from visioneval.core.records import Record
from visioneval.core.rundir import image_hashes
from visioneval.core.store import SAMPLES_FILE, record_id

CORRECT, WRONG, ERROR, UNSCORED = range(4)
OUTCOMES = {"correct": CORRECT, "wrong": WRONG, "error": ERROR, "unscored": UNSCORED}


def iter_offsets(path: Path) -> Iterator[tuple[int, bytes]]:
    """(byte offset, line) of every complete, non-blank journal line, as `RunStore.iter_lines`
    reads them (a torn last line is left out)."""
    if not path.exists():
        return
    with open(path, "rb") as fh:
        offset = 0
        for line in fh:
            start, offset = offset, offset + len(line)
            if not line.endswith(b"\n"):
                return
            if line.strip():
                yield start, line


def _parse(line: bytes) -> Record | None:
    try:
        return Record.model_validate_json(line)
    except ValueError:
        return None


def outcome(row: dict[str, Any], view: str) -> int:
    """The browser's outcome of a row under one view (as report.js decides it)."""
    if row.get("e") is not None:
        return ERROR
    verdict = row["v"].get(view, {}).get("ok")
    if verdict is None:
        return UNSCORED
    return CORRECT if verdict else WRONG


@dataclass
class JournalIndex:
    """One entry per sample (its last record), in journal order."""

    path: Path
    ids: list[str] = field(default_factory=list)
    offsets: array = field(default_factory=lambda: array("q"))
    groups: array = field(default_factory=lambda: array("i"))
    labels: list[tuple[int, ...]] = field(default_factory=list)
    images: list[str | None] = field(default_factory=list)
    errors: bytearray = field(default_factory=bytearray)
    outcomes: dict[str, bytearray] = field(default_factory=dict)
    group_ids: dict[str, int] = field(default_factory=dict)
    label_ids: dict[str, int] = field(default_factory=dict)
    slot: dict[str, int] = field(default_factory=dict)

    @classmethod
    def build(cls, directory: Path,
              to_row: Callable[[Record], dict[str, Any]]) -> JournalIndex:
        path = directory / SAMPLES_FILE
        last: dict[str, int] = {}
        for offset, line in iter_offsets(path):
            sample_id = record_id(line)
            if sample_id is None and (record := _parse(line)) is not None:
                sample_id = record.id
            if sample_id is not None:
                last[sample_id] = offset
        wanted = set(last.values())
        del last
        index = cls(path)
        shared: dict[str, str] = {}  # one string per distinct image, however many samples
        for offset, line in iter_offsets(path):
            if offset in wanted and (record := _parse(line)) is not None:
                index._add(offset, record, to_row(record), shared)
        return index

    def _add(self, offset: int, record: Record, row: dict[str, Any],
             shared: dict[str, str]) -> None:
        n = len(self.ids)
        self.slot[record.id] = n
        self.ids.append(record.id)
        self.offsets.append(offset)
        self.groups.append(self.group_ids.setdefault(record.group, len(self.group_ids)))
        self.labels.append(tuple(self.label_ids.setdefault(label, len(self.label_ids))
                                 for label in row["labels"]))
        images = image_hashes(record)
        self.images.append(shared.setdefault(images[-1], images[-1]) if images else None)
        row["e"] = record.response.error
        self.errors.append(row["e"] is not None)
        for view in row["v"]:
            if view not in self.outcomes:
                self.outcomes[view] = bytearray(ERROR if e else UNSCORED for e in self.errors[:n])
        for view, codes in self.outcomes.items():
            codes.append(outcome(row, view))

    def __len__(self) -> int:
        return len(self.ids)

    def read(self, slot: int) -> Record:
        """The sample's last record, read back from the journal."""
        with open(self.path, "rb") as fh:
            fh.seek(self.offsets[slot])
            record = _parse(fh.readline())
        if record is None:  # the file was replaced since the index was built
            raise LookupError(f"{self.ids[slot]}: its line in samples.jsonl no longer parses")
        return record

    def select(self, group: str = "", label: str = "", view: str = "",
               outcome_name: str = "") -> Iterator[int]:
        """Slots passing the filters that need no record, in journal order."""
        group_id = self.group_ids.get(group) if group else None
        label_id = self.label_ids.get(label) if label else None
        if (group and group_id is None) or (label and label_id is None):
            return
        wanted = OUTCOMES.get(outcome_name)
        codes = self.outcomes.get(view)
        for slot in range(len(self.ids)):
            if group_id is not None and self.groups[slot] != group_id:
                continue
            if label_id is not None and label_id not in self.labels[slot]:
                continue
            if wanted is not None:
                code = codes[slot] if codes is not None else \
                    ERROR if self.errors[slot] else UNSCORED
                if code != wanted:
                    continue
            yield slot

    def search(self, slots: Iterator[int], needle: str,
               to_row: Callable[[Record], dict[str, Any]]) -> Iterator[int]:
        """The slots whose id, target, answer or error contains `needle` (lower case), as
        the page's own filter reads them. An ASCII needle JSON writes as is is first looked
        for in the raw line, so only candidate lines are parsed."""
        raw = needle.encode() if needle.isascii() and needle.isprintable() \
            and not any(c in needle for c in '"\\') else None
        with open(self.path, "rb") as fh:
            for slot in slots:
                fh.seek(self.offsets[slot])
                line = fh.readline()
                if raw is not None and raw not in line.lower():
                    continue
                record = _parse(line)
                if record is None:
                    continue
                row = to_row(record)
                hay = " ".join((record.id, str(row.get("t", "")),
                                row.get("r") or record.response.text or "",
                                record.response.error or ""))
                if needle in hay.lower():
                    yield slot
