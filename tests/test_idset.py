"""Compact id indexes: membership and "last record of a sample" agree with plain sets and
dicts, including ids that differ only at the end and digests with trailing zero bytes."""

from __future__ import annotations

import random

import numpy as np

from visioneval.core.idset import DIGEST_BYTES, IdSet, digest, last_occurrences


def test_membership_matches_a_set():
    rng = random.Random(0)
    ids = [f"ICON/{rng.randrange(10**6)}/shape/original{'#' * rng.randrange(3)}"
           for _ in range(5000)]
    present, absent = ids[:2500], [i + "x" for i in ids[2500:]]
    index = IdSet(present)
    assert len(index) == len(set(present))
    assert all(i in index for i in present) and not any(i in index for i in absent)
    assert "" not in IdSet() and 3 not in index


def test_digests_ending_in_zero_bytes_are_found():
    """numpy strips trailing NULs from S-typed scalars; both sides must be treated alike."""
    ending = [str(i) for i in range(200_000) if digest(str(i)).endswith(b"\0")][:5]
    assert ending, "some of 200,000 digests end in a zero byte"
    assert all(i in IdSet(ending) for i in ending)


def test_last_occurrence_per_sample_matches_a_dict():
    rng = random.Random(1)
    lines = [rng.choice("abcdefgh") for _ in range(300)]
    last = {sample: position for position, sample in enumerate(lines)}
    flags = last_occurrences(np.array([digest(s) for s in lines], dtype=f"S{DIGEST_BYTES}"))
    assert [p for p, flag in enumerate(flags) if flag] == sorted(last.values())
    assert not last_occurrences(np.array([], dtype=f"S{DIGEST_BYTES}")).any()


def test_id_values_match_a_dict_and_keep_the_last_value():
    from visioneval.core.idset import IdValues

    table, kept = IdValues("q"), {}
    for i in range(500):
        sample_id = f"sample-{i % 180}"
        table.add(sample_id, i)
        kept[sample_id] = i
    assert len(table) == 500
    assert all(table.get(k) == v for k, v in kept.items())
    assert table.get("absent") is None and IdValues("d").get("x") is None
