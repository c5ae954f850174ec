"""`visioneval compare` on runs with repeated answers: whether two runs differ by more than
a model's own answers vary from pass to pass. Each run's epochs.json gives the standard
deviation of one pass's score from answer variation alone, sqrt(within / n), and that of its
item means of K answers, sqrt(within / (n K)) (Miller 2024, section 3); two passes differ by
up to 1.96 sqrt(sd_a^2 + sd_b^2) from that alone, 95% of the time."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from visioneval.epochs.summary import EpochsSummary, read
from visioneval.stats.detection import Z95


def _spread(summary: EpochsSummary) -> tuple[float, float] | None:
    """(one pass's SD, the item means' SD) from answer variation; None without a split."""
    split = summary.split
    if split is None or summary.item_means is None:
        return None
    one = split.one_pass_sd
    return one, one / math.sqrt(max(split.answers_per_item, 1.0))


def lines(directories: Sequence[Path]) -> list[str]:
    """A sentence per run after the first, when either has repeated answers."""
    found: list[EpochsSummary | None] = []
    for directory in directories:
        try:
            found.append(read(directory))
        except ValueError as exc:
            return [f"epochs: {exc}"]
    if len(found) < 2 or all(s is None for s in found):
        return []
    out = []
    first = found[0]
    for directory, other in zip(directories[1:], found[1:], strict=True):
        out.extend(_line(Path(directories[0]).name, first, Path(directory).name, other))
    return out


def _line(name_a: str, a: EpochsSummary | None, name_b: str, b: EpochsSummary | None
          ) -> list[str]:
    spread_a = _spread(a) if a is not None else None
    spread_b = _spread(b) if b is not None else None
    if spread_a is None and spread_b is None:
        return []
    assumed = ""
    if spread_a is None or spread_b is None:
        known = spread_a or spread_b
        spread_a, spread_b = spread_a or known, spread_b or known
        assumed = " (the run asked once taken to vary as the other)"
    assert spread_a is not None and spread_b is not None
    one = Z95 * math.hypot(spread_a[0], spread_b[0])
    out = [f"answer variation alone: two single passes of {name_a} and {name_b} differ by up "
           f"to ±{100 * one:.1f} points (95%){assumed}"]
    if a is not None and b is not None and a.item_means and b.item_means:
        means = Z95 * math.hypot(spread_a[1], spread_b[1])
        difference = b.item_means.value - a.item_means.value
        verdict = "less than" if abs(difference) < means else "more than"
        out.append(f"{name_b} - {name_a}: {100 * difference:+.1f} points on the item means, "
                   f"{verdict} their own answers' pass-to-pass variation (±{100 * means:.1f})")
    return out
