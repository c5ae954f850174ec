"""The samples in a seeded random order, for a run that stops once its answer is known
(`--target-ci`): an interval that stops the run is only honest when the samples before the
stop are a uniformly random draw from the data, not the first configs or the easiest rows.

The order is that of a seeded hash of each sample's id (blake2b of seed and id, 64 bits):
hashes of distinct ids behave as independent uniform numbers, and sorting independent
uniform numbers gives every permutation the same chance, so the order is a uniformly random
permutation, the same on every machine and in every resume of the run (the ids, the seed
and hence the order are fixed before any answer is seen). Ties (2^-64 a pair) fall back to
the id.

Memory: the data is read in passes, each keeping the next `window` samples of the order
(with their images) in a bounded heap; a run that stops within the first window reads the
data once. The ids of all samples are never held at once."""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Callable, Iterable, Iterator
from itertools import count

from visioneval.core.records import Sample, SkippedRow

WINDOW = 256
"""Samples held per pass: a few hundred images in memory, and one pass over the data per
that many samples run."""

Key = tuple[int, str]


def order_key(seed: int, sample_id: str) -> Key:
    digest = hashlib.blake2b(f"{seed}\0{sample_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big"), sample_id


def seeded_order(read: Callable[[], Iterable[Sample | SkippedRow]], seed: int,
                 window: int = WINDOW) -> Iterator[Sample | SkippedRow]:
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


def _negated(text: str) -> tuple[int, ...]:
    """A string's order reversed (for the max-heap's tie-break on the id)."""
    return tuple(-ord(c) for c in text) + (1,)
