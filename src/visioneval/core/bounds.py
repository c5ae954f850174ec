"""What a run can record of a value a user gave (a suite file, a benchmark's options): run.json
and the journal are JSON written by orjson, which holds whole numbers of 64 bits and writes
a number that is not finite as null (read back, it is no number). So a value beyond those is
refused where it is given, in one line naming it, not when the run writes its files."""

from __future__ import annotations

import math
from typing import Any

MAX_DEPTH = 16
"""Most levels of tables and lists in a value: a benchmark's options are a few deep."""
INT_RANGE = (-(2**63), 2**63 - 1)


def first_unrecordable(value: Any) -> tuple[tuple[int | str, ...], str] | None:
    """(where, why) of the first part of `value` a run could not record: a whole number
    beyond 64 bits, a number that is not finite, tables or lists nested deeper than
    MAX_DEPTH. `where` is the keys and (0-based) list positions down to it. Walked without
    recursion, so a value nested thousands deep is said, not a RecursionError."""
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(value, ())]
    while stack:
        item, loc = stack.pop()
        if len(loc) > MAX_DEPTH:
            return loc, f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, bool):
            continue
        if isinstance(item, int) and not INT_RANGE[0] <= item <= INT_RANGE[1]:
            return loc, f"{item} is out of range (whole numbers up to 2^63-1)"
        if isinstance(item, float) and not math.isfinite(item):
            return loc, f"{item} is not a finite number"
        if isinstance(item, dict):
            stack.extend((v, (*loc, str(k))) for k, v in reversed(item.items()))
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend((v, (*loc, i)) for i, v in reversed(list(enumerate(item))))
    return None
