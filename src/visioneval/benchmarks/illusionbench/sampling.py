"""`--sample-seed`: a stratified random subset of N rows per subset.

Strata are (shape class, difficulty), read from the image names, so a small sample keeps the
subset's class and difficulty mix; rows whose name does not parse form one stratum of their
own (they are sampled, then reported as skipped, like any bad row). Each stratum gets its
proportional share of N (largest remainders round up, ties broken by the seeded generator),
then that many rows drawn without replacement. Same seed, same data: same rows."""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable


def stratified(rows: Iterable[tuple[int, Hashable]], n: int, seed: int, salt: str) -> set[int]:
    """Row indices chosen from (index, stratum) pairs; all rows when there are at most n."""
    strata: dict[Hashable, list[int]] = {}
    for index, key in rows:
        strata.setdefault(key, []).append(index)
    total = sum(len(members) for members in strata.values())
    if n >= total:
        return {i for members in strata.values() for i in members}
    rng = random.Random(f"{seed}/{salt}")
    keys = sorted(strata, key=repr)
    quotas = {k: n * len(strata[k]) // total for k in keys}
    order = sorted(keys, key=lambda k: (-(n * len(strata[k]) % total), rng.random()))
    for k in order[:n - sum(quotas.values())]:
        quotas[k] += 1
    return {i for k in keys for i in rng.sample(strata[k], quotas[k])}
