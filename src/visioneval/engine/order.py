"""The samples in a seeded random order, for a run that stops once its answer is known
(`--target-ci`): an interval that stops the run is only honest when the samples before the
stop are a uniformly random draw from the data, not the first configs or the easiest rows.

The order is that of a seeded hash of each sample's id (blake2b of seed and id, 64 bits):
hashes of distinct ids behave as independent uniform numbers, and sorting independent
uniform numbers gives every permutation the same chance, so the order is a uniformly random
permutation, the same on every machine and in every resume of the run (the ids and its seed
value, hence the order, are fixed before any answer is seen). Ties (2^-64 a pair) fall back to
the id.

Memory: the data is read in passes, each keeping the next window of samples of the order
(with their images) in a bounded heap; the window doubles from WINDOW up to MAX_WINDOW, so
a run that stops within its first 256 samples reads the data once, and one that runs to the
end of N samples about N/1024 + 2 times. The ids of all samples are never held at once."""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Callable, Iterable, Iterator
from itertools import count

from visioneval.core.records import Sample, SkippedRow

WINDOW = 256
"""Samples held in the first pass (later passes: twice the last, up to MAX_WINDOW)."""
MAX_WINDOW = 1024
"""At most this many samples (with their images) held at once: a thousand 1 MB images."""

Key = tuple[int, str]


def order_key(seed: int, sample_id: str) -> Key:
    digest = hashlib.blake2b(f"{seed}\0{sample_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big"), sample_id


def seeded_order(read: Callable[[], Iterable[Sample | SkippedRow]], seed: int,
                 window: int = WINDOW, max_window: int = MAX_WINDOW
                 ) -> Iterator[Sample | SkippedRow]:
    """Every sample of `read()` in the seeded order (skipped rows first, once, as they are
    met in the first pass); `read` is called once per pass."""
    after: Key | None = None
    first = True
    while True:
        heap: list[tuple[int, tuple[int, ...], int, Sample]] = []  # max-heap: keys negated
        tie = count()
        for item in read():
            if isinstance(item, SkippedRow):
                if first:
                    yield item
                continue
            key = order_key(seed, item.id)
            if after is not None and key <= after:
                continue
            entry = (-key[0], _negated(key[1]), next(tie), item)
            if len(heap) < window:
                heapq.heappush(heap, entry)
            elif entry[:2] > heap[0][:2]:
                heapq.heapreplace(heap, entry)
        first = False
        if not heap:
            return
        ordered = sorted((entry[3] for entry in heap), key=lambda s: order_key(seed, s.id))
        yield from ordered
        after = order_key(seed, ordered[-1].id)
        if len(heap) < window:
            return
        window = min(2 * window, max(max_window, window))


def _negated(text: str) -> tuple[int, ...]:
    """A string's order reversed (for the max-heap's tie-break on the id)."""
    return tuple(-ord(c) for c in text) + (1,)
