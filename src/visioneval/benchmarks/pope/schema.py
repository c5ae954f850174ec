"""The shape of POPE's metrics.json (`metrics.summarize`): checked before the file is written,
every key known, every figure optional (absent with the reason when it cannot be computed)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from visioneval.core.runfiles import Interval, MetricsBlock


class Scored(MetricsBlock):
    """One protocol on one slice (`counts.Counts.block`): counts, metrics, intervals over
    images. `unparsed`: lmms-eval's answers that are not exactly yes/no, VLMEvalKit's
    Unknown readings; `lmms_yes_ratio`: lmms-eval's pope_yes_ratio (the "yes" labels)."""

    n: int
    n_errors: int
    tp: int
    fp: int
    tn: int
    fn: int
    unparsed: int
    unavailable: str | None = None
    lmms_yes_ratio: float | None = None
    accuracy: float | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    yes_ratio: float | None = None
    accuracy_unavailable: str | None = None
    precision_unavailable: str | None = None
    recall_unavailable: str | None = None
    f1_unavailable: str | None = None
    yes_ratio_unavailable: str | None = None
    accuracy_se: float | None = None
    precision_se: float | None = None
    recall_se: float | None = None
    f1_se: float | None = None
    yes_ratio_se: float | None = None
    accuracy_ci95: Interval | None = None
    precision_ci95: Interval | None = None
    recall_ci95: Interval | None = None
    f1_ci95: Interval | None = None
    yes_ratio_ci95: Interval | None = None
    accuracy_ci95_unavailable: str | None = None
    precision_ci95_unavailable: str | None = None
    recall_ci95_unavailable: str | None = None
    f1_ci95_unavailable: str | None = None
    yes_ratio_ci95_unavailable: str | None = None
    accuracy_ci95_clusters: str | None = None
    precision_ci95_clusters: str | None = None
    recall_ci95_clusters: str | None = None
    f1_ci95_clusters: str | None = None
    yes_ratio_ci95_clusters: str | None = None
    accuracy_ci95_n_clusters: int | None = None
    precision_ci95_n_clusters: int | None = None
    recall_ci95_n_clusters: int | None = None
    f1_ci95_n_clusters: int | None = None
    yes_ratio_ci95_n_clusters: int | None = None


class MeanF1(MetricsBlock):
    """The mean of the three settings' F1 (LLaVA-1.5's summary), clustered by image."""

    unavailable: str | None = None
    n: int | None = None
    f1: float | None = None
    f1_se: float | None = None
    f1_ci95: Interval | None = None
    f1_ci95_unavailable: str | None = None
    f1_ci95_clusters: str | None = None
    f1_ci95_n_clusters: int | None = None


class Labelled(MetricsBlock):
    """One protocol under one label set: per setting, and what the protocol adds."""

    settings: dict[str, Scored]
    pooled: Scored | None = None  # lmms-eval's task `pope`
    overall: Scored | None = None  # VLMEvalKit's Overall
    mean_f1: MeanF1 | None = None  # the paper protocol's, LLaVA-1.5's summary
    sources: dict[str, dict[str, Scored]] | None = None  # the paper's, per image dataset


class Labels(MetricsBlock):
    """The label sets scored and RePOPE's corrections applied."""

    sets: list[str]
    manifest: str
    relabelled: int
    left_out: int
    problems: list[str]
    n_problems: int


class PopeMetrics(MetricsBlock):
    """metrics.json of POPE: protocol -> label set -> block; the differences; the labels."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    paper: dict[str, Labelled] | None = None
    lmms_eval: dict[str, Labelled] | None = Field(
        None, alias="lmms-eval", description="Written `lmms-eval` in the file.")
    vlmevalkit: dict[str, Labelled] | None = None
    differences: dict[str, Any] | None = None  # harness.differences.DifferenceSummary
    labels: Labels
