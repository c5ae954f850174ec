"""Sample ids held compactly: 16 bytes each, whatever the id's length.

A run of 130,000 samples keeps two id indexes (which journal line is each sample's last,
and which samples resume skips). As Python strings in a dict or set they cost ~150 bytes
an id, ~20 MB each at that size (docs/PERFORMANCE.md); as sorted 128-bit BLAKE2b digests
in one numpy array, 2 MB. Two distinct ids share a digest with probability ~n^2 / 2^129
(1e-29 at 130,000 ids).
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

DIGEST_BYTES = 16


def digest(sample_id: str) -> bytes:
    return hashlib.blake2b(sample_id.encode(), digest_size=DIGEST_BYTES).digest()


class IdSet:
    """An immutable set of sample ids: membership by binary search over sorted digests."""

    __slots__ = ("_digests",)

    def __init__(self, ids: Iterable[str] = ()):
        found = np.fromiter((digest(i) for i in ids), dtype=f"S{DIGEST_BYTES}")
        self._digests = np.unique(found)

    @classmethod
    def from_digests(cls, digests: bytes) -> IdSet:
        """From concatenated 16-byte digests (what an `IdCollector` gathers)."""
        found = cls()
        found._digests = np.unique(np.frombuffer(digests, dtype=f"S{DIGEST_BYTES}"))
        return found

    def __len__(self) -> int:
        return len(self._digests)

    def holds_all(self, digests: bytes) -> bool:
        """Whether every id of concatenated 16-byte digests (an `IdCollector`'s) is here."""
        found = np.frombuffer(digests, dtype=f"S{DIGEST_BYTES}")
        if not len(found):
            return True
        if not len(self._digests):
            return False
        at = np.minimum(np.searchsorted(self._digests, found), len(self._digests) - 1)
        return bool(np.all(self._digests[at] == found))

    def __contains__(self, sample_id: object) -> bool:
        if not isinstance(sample_id, str) or not len(self._digests):
            return False
        # Both sides taken from S16 arrays, so numpy pads and compares them alike.
        key = np.array([digest(sample_id)], dtype=f"S{DIGEST_BYTES}")
        at = int(np.searchsorted(self._digests, key)[0])
        return at < len(self._digests) and self._digests[at] == key[0]


def all_distinct(digests: bytes) -> bool:
    """Whether concatenated 16-byte digests are all different (no id twice)."""
    found = np.frombuffer(digests, dtype=f"S{DIGEST_BYTES}")
    return len(np.unique(found)) == len(found)


def last_occurrences(digests: np.ndarray) -> np.ndarray:
    """For each position, whether no later position holds the same digest (the journal's
    last record of a sample supersedes the earlier ones)."""
    last = np.zeros(len(digests), dtype=bool)
    if len(digests):
        _, first_in_reverse = np.unique(digests[::-1], return_index=True)
        last[len(digests) - 1 - first_in_reverse] = True
    return last


class IdCollector:
    """The ids of the samples a session's data yielded, gathered as the engine reads them
    (16 bytes each), and whether the data was read to its end: only then can a journal
    record be said to be of a sample that is not in the data."""

    __slots__ = ("_digests", "complete")

    def __init__(self) -> None:
        self._digests = bytearray()
        self.complete = False

    def watch(self, items: Iterable[T], id_of: Callable[[T], str | None]) -> Iterator[T]:
        """`items`, unchanged, noting each one's id (`id_of`: None for items without one)."""
        digests = self._digests
        for item in items:
            sample_id = id_of(item)
            if sample_id is not None:
                digests += digest(sample_id)
            yield item
        self.complete = True

    def ids(self) -> IdSet | None:
        """The ids seen, or None if the data was not read to its end."""
        return IdSet.from_digests(bytes(self._digests)) if self.complete else None


class IdValues:
    """One number per sample id, 16 + 8 bytes a sample: ids as digests, looked up by binary
    search over a sorted index built on the first lookup after an `add`. An id added twice
    keeps both: `get` gives the last, as a dict would, `get_all` every one. `typecode`: "d"
    (a float; NaN where there is none, for the caller to read) or "q" (an integer, e.g. a
    file offset)."""

    __slots__ = ("_digests", "_values", "_index")

    def __init__(self, typecode: str = "d"):
        self._digests = bytearray()
        self._values: array[Any] = array(typecode)
        self._index: tuple[np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self._values)

    def add(self, sample_id: str, value: float) -> None:
        self._digests += digest(sample_id)
        self._values.append(value)
        self._index = None

    def get(self, sample_id: str) -> float | int | None:
        """The id's last value; None when it has none."""
        found = self.get_all(sample_id)
        return found[-1] if found else None

    def get_all(self, sample_id: str) -> list[float | int]:
        """Every value the id was added with, in the order they were added."""
        if not self._values:
            return []
        if self._index is None:
            digests = np.frombuffer(bytes(self._digests), dtype=f"S{DIGEST_BYTES}")
            order = np.argsort(digests, kind="stable")  # equal digests keep their order
            values = np.frombuffer(self._values.tobytes(), dtype=self._values.typecode)
            self._index = (digests[order], values[order])
        digests, values = self._index
        key = np.array([digest(sample_id)], dtype=f"S{DIGEST_BYTES}")
        start = int(np.searchsorted(digests, key, side="left")[0])
        end = int(np.searchsorted(digests, key, side="right")[0])
        return [v.item() for v in values[start:end]]
