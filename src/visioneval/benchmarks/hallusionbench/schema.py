"""The shape of HallusionBench's metrics.json (`metrics.summarize`), which checks a summary
before it is written: every key known, every figure optional (absent with a reason)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from visioneval.core.runfiles import Interval, MetricsBlock


class Figures(MetricsBlock):
    n: int
    unavailable: str | None = None
    all_right: float | None = None
    all_wrong: float | None = None
    mixed: float | None = None
    mean_accuracy: float | None = None


class YesNo(MetricsBlock):
    """`yes_ratio_stats` ([P] utils.py:414-427) and the answers' own Yes/No words."""

    n: int
    unavailable: str | None = None
    truth_yes: float | None = None
    inferred_yes: float | None = None
    difference: float | None = None
    false_yes_share: float | None = None
    false_yes_share_unavailable: str | None = None
    said_yes: float | None = None
    said_no: float | None = None
    said_neither: float | None = None


class MeanOfThree(MetricsBlock):
    unavailable: str | None = None
    value: float | None = None
    value_se: float | None = None
    value_ci95: Interval | None = None
    value_ci95_unavailable: str | None = None
    value_ci95_clusters: str | None = None
    value_ci95_n_clusters: int | None = None


class ProtocolMetrics(MetricsBlock):
    """One protocol under one label set. `overall`, `by_category` and `by_subcategory` hold
    `metrics.scores` blocks: n_sets, incomplete, and per accuracy (aAcc, fAcc, qAcc, easy,
    hard) its value, `n_<name>`, and its interval keys (`stats.bootstrap.attach`)."""

    protocol: str
    label_set: str
    reading: str
    n: int
    n_errors: int
    excluded: int
    unclear: int
    unavailable: str | None = None
    overall: dict[str, Any]
    by_category: dict[str, dict[str, Any]]
    by_subcategory: dict[str, dict[str, Any]]
    figures: Figures
    yes_no: YesNo | None = None
    mean_of_three: MeanOfThree | None = None


class Labels(BaseModel):
    model_config = ConfigDict(extra="forbid")

    manifest: str
    corrections: int
    searched: str
    sets: list[str]
    items_corrected: int
    corrected_note: str | None = None


class HallusionBenchMetrics(BaseModel):
    """metrics.json of HallusionBench."""

    model_config = ConfigDict(extra="forbid")

    protocols: dict[str, ProtocolMetrics]
    corrected: dict[str, ProtocolMetrics] | None = None
    labels: Labels
    differences: dict[str, Any] | None = None
