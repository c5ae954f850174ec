"""What a benchmark tells `visioneval explain` about a run's metrics: its headline under each
protocol and label set, in the terms of one column of the paper's published table, so the
gap between the paper's number for a model and the run's can be followed step by step.

A benchmark that can (`core.capabilities.ExplainsGap`) reads its own metrics.json into
`GapHeadlines`; nothing here knows a benchmark."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

Labels = Literal["original", "corrected"]
LABELS: tuple[Labels, ...] = ("original", "corrected")


class ProtocolHeadline(BaseModel, frozen=True):
    """One protocol's headline on one label set, in percent, with its 95% interval."""

    protocol: str
    labels: Labels
    value: float
    interval: tuple[float, float] | None = None
    metric: str  # what this protocol reports, e.g. "pair accuracy", "micro accuracy"
    n: int | None = None
    no_interval: str | None = None  # why `interval` is None, when the metrics say


@dataclass(frozen=True)
class GapHeadlines:
    """A run's headlines, and which published column the paper's protocol's headline is
    (`column`, a key of the benchmark's published table; `reference` the protocol whose
    rules it was computed by)."""

    column: str
    reference: str
    headlines: list[ProtocolHeadline] = field(default_factory=list)
    # per (protocol, labels), the weights of the strata of `GapShare` (missing: equal)
    weights: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)

    def of(self, protocol: str, labels: Labels = "original") -> ProtocolHeadline | None:
        return next((h for h in self.headlines
                     if h.protocol == protocol and h.labels == labels), None)

    @property
    def protocols(self) -> list[str]:
        seen: list[str] = []
        for h in self.headlines:
            if h.protocol not in seen:
                seen.append(h.protocol)
        return seen


def percent(value: float | None, interval: object = None) -> tuple[float | None,
                                                                 tuple[float, float] | None]:
    """A fraction and its (low, high) interval as percent; the interval None when it is not
    a pair of numbers."""
    if value is None:
        return None, None
    shown = None
    if isinstance(interval, (list, tuple)) and len(interval) == 2 \
            and all(isinstance(x, (int, float)) for x in interval):
        shown = (100 * float(interval[0]), 100 * float(interval[1]))
    return 100 * float(value), shown


Reported = tuple[object, str, str]
"""Where a protocol's headline is on one label set: the metrics block that holds it (a dict
with `key` as a fraction, `key_ci95` as [low, high], maybe `n`), the key, and the name of
the number the protocol reports."""


def gathered(column: str, reference: str, protocols: Sequence[str],
             find: Callable[[str, Labels], Reported]) -> GapHeadlines | None:
    """Headlines read from a benchmark's metrics by `find` (protocol, labels) -> `Reported`;
    a label set or protocol without its block is left out. None when none has one."""
    out = GapHeadlines(column=column, reference=reference)
    for protocol in protocols:
        for labels in LABELS:
            block, key, name = find(protocol, labels)
            if not isinstance(block, dict):
                continue
            value, interval = percent(block.get(key), block.get(f"{key}_ci95"))
            if value is None:
                continue
            n = block.get("n")
            why = block.get(f"{key}_ci95_unavailable")
            out.headlines.append(ProtocolHeadline(
                protocol=protocol, labels=labels, value=value, interval=interval,
                metric=name, n=n if isinstance(n, int) else None,
                no_interval=why if isinstance(why, str) else None))
    return out if out.headlines else None


def dig(tree: object, *keys: str) -> object:
    """tree[k1][k2]... or None where a level is missing or not a dict."""
    for key in keys:
        if not isinstance(tree, dict):
            return None
        tree = tree.get(key)
    return tree


Key = tuple[str, Labels]
"""A headline's protocol and label set."""
Side = tuple[str, Key]
"""A headline of one family of records: "" the stored images, else a variant's name."""


@dataclass(frozen=True)
class GapShare:
    """One unit's part of a headline: what it adds to its stratum's numerator and
    denominator. A headline is Σ_s w_s · (Σ num_s / Σ den_s) over its strata s (one stratum:
    a plain ratio; a mean of tasks: one stratum per task, equal weights), which is every
    perception benchmark's headline: an accuracy, a pair or group accuracy, a mean of task or
    source accuracies, an F1 (num 2·TP, den 2·TP + FP + FN)."""

    stratum: str
    num: float
    den: float


@dataclass(frozen=True)
class GapUnit:
    """What one resampling unit (a question, a pair, a group, an image's questions) adds to
    each headline, and the cluster it is drawn with (units of one cluster are resampled
    together, as the benchmark's own intervals draw them)."""

    cluster: str
    shares: dict[Key, GapShare]


def stratum_weights(weights: dict[str, float] | None, strata: Sequence[str]
                    ) -> dict[str, float]:
    """The weights of `strata`: as given, else equal (a mean of the strata)."""
    if weights:
        return {s: weights.get(s, 0.0) for s in strata}
    return {s: 1 / len(strata) for s in strata} if strata else {}
