"""metrics.json's shape for MMVP (metrics.py writes it): read when the command line starts,
so it holds the models alone."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from visioneval.core.runfiles import Interval, MetricsBlock


class PatternCell(MetricsBlock):
    """One visual pattern (PixMMVP's tags) under one protocol and label set."""

    n: int = Field(description="Questions of the pattern scored.")
    accuracy: float = Field(description="Per-question accuracy.")
    n_pairs: int = Field(description="Complete pairs whose two questions share the pattern.")
    pair_accuracy: float | None = Field(None, description="Pair accuracy over them.")


class LabelSetBlock(MetricsBlock):
    """One protocol under one label set (`Tally.block`): questions and pairs."""

    n: int = Field(description="Questions scored.")
    n_errors: int = Field(description="Failed requests: never scored.")
    unavailable: str | None = None
    accuracy: float | None = Field(None, description="Per-question accuracy.")
    accuracy_se: float | None = None
    accuracy_ci95: Interval | None = Field(None, description="Its 95% interval, a cluster "
                                           "bootstrap that draws pairs.")
    accuracy_ci95_unavailable: str | None = None
    accuracy_ci95_clusters: str | None = Field(None, description="\"pair\".")
    accuracy_ci95_n_clusters: int | None = None
    n_pairs: int | None = Field(None, description="Pairs with both questions scored.")
    incomplete_pairs: int | None = Field(None, description="Pairs with a failed or missing "
                                         "question, left out of pair accuracy.")
    pair_accuracy: float | None = Field(None, description="Both questions of a pair right: "
                                        "the paper's metric.")
    pair_accuracy_se: float | None = None
    pair_accuracy_ci95: Interval | None = Field(None, description="Its 95% interval, a "
                                                "bootstrap over pairs.")
    pair_accuracy_ci95_unavailable: str | None = None
    pair_accuracy_unavailable: str | None = None
    per_pattern: dict[str, PatternCell] | None = None


class ProtocolBlock(MetricsBlock):
    """One protocol: its label sets (`original`: its own labels) and its unread answers."""

    original: LabelSetBlock | None = None
    corrected: LabelSetBlock | None = None
    unparsed: dict[str, int] = Field(description="Answers it could not read, by reason "
                                     "(scored wrong).")


class CorrectionsBlock(MetricsBlock):
    """corrections.json's version and items, and with both label sets what they change."""

    version: str
    items: list[str]
    effect: dict[str, dict[str, float]] | None = Field(
        None, description="Per protocol: answers whose verdict changed, and corrected minus "
        "own pair and per-question accuracy.")


class MmvpMetrics(MetricsBlock):
    """metrics.json of MMVP."""

    protocols: dict[str, ProtocolBlock]
    readings: dict[str, str] = Field(description="How each protocol read its answers: by "
                                     "rule, or with the judge model named.")
    corrections: CorrectionsBlock
    differences: dict[str, Any] | None = Field(None, description="Why the protocols differ "
                                               "(harness.differences' summary).")
    label_notes: list[str] | None = Field(None, description="Labels the data holds where a "
                                          "change was written for another value.")
    patterns_source: str
