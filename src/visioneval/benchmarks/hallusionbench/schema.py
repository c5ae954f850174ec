"""The shape of HallusionBench's metrics.json (`metrics.summarize`), which checks a summary
before it is written: every key known, every figure optional (absent with a reason)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from visioneval.core.runfiles import Interval, MetricsBlock


class FigureConsistency(MetricsBlock):
    """The paper's consistency test: the figures whose questions are all right, all wrong or
    mixed (shares), and the mean of their accuracies."""

    n: int = Field(description="Complete figures (no failed request among their questions).")
    unavailable: str | None = None
    all_right: float | None = None
    all_wrong: float | None = None
    mixed: float | None = None
    mean_accuracy: float | None = None


class YesNo(MetricsBlock):
    """The paper's yes/no bias (`yes_ratio_stats`, utils.py:414-427) and the answers' own
    Yes/No words (shares of the scored answers)."""

    n: int = Field(description="Scored answers.")
    unavailable: str | None = None
    truth_yes: float | None = Field(None, description="Questions whose label is yes.")
    inferred_yes: float | None = Field(None, description="The paper's reading of a yes: right "
                                       "on a yes question or wrong on a no question.")
    difference: float | None = Field(None, description="inferred_yes - truth_yes (the "
                                     "paper's Pct Diff).")
    false_yes_share: float | None = Field(None, description="Wrong answers on no questions "
                                          "among the wrong answers (the paper's FP Ratio).")
    false_yes_share_unavailable: str | None = None
    said_yes: float | None = Field(None, description="Answers whose Yes/No word is Yes.")
    said_no: float | None = None
    said_neither: float | None = None


class MeanOfThree(MetricsBlock):
    """VLMEvalKit's single number: the mean of aAcc, fAcc and qAcc, with its interval."""

    unavailable: str | None = None
    value: float | None = None
    value_se: float | None = None
    value_ci95: Interval | None = None
    value_ci95_unavailable: str | None = None
    value_ci95_clusters: str | None = None
    value_ci95_n_clusters: int | None = None


class ProtocolMetrics(MetricsBlock):
    """One protocol under one label set. `overall`, `by_category` and `by_subcategory` hold
    the paper's accuracies (`metrics.scores`): `n_sets`, `incomplete` (figures and groups left
    out for a failed request), and per accuracy (aAcc, fAcc, qAcc, easy, hard) its value,
    `n_<name>` (what it counts) and, overall and per category, its interval
    (`<name>_ci95`, drawn by set)."""

    protocol: str = Field(description="paper, lmms-eval or vlmevalkit.")
    label_set: str = Field(description="original or corrected.")
    reading: str = Field(description="rule (visioneval's Yes/No rule stands in for the "
                         "grader) or judge (the grader's verdicts).")
    n: int = Field(description="Questions scored.")
    n_errors: int = Field(description="Questions whose request (or judge) failed.")
    excluded: int = Field(description="Questions the protocol does not ask (the harnesses: "
                          "those without a figure).")
    unclear: int = Field(description="Answers read as neither yes nor no (or the grader's "
                         "unclear).")
    unavailable: str | None = None
    overall: dict[str, Any]
    by_category: dict[str, dict[str, Any]]
    by_subcategory: dict[str, dict[str, Any]]
    figures: FigureConsistency
    yes_no: YesNo | None = Field(None, description="The paper's protocol only.")
    mean_of_three: MeanOfThree | None = Field(None, description="vlmevalkit only.")


class Labels(BaseModel):
    """The label corrections manifest the run used and what it changed."""

    model_config = ConfigDict(extra="forbid")

    manifest: str = Field(description="The manifest's version.")
    corrections: int = Field(description="Corrections it lists.")
    searched: str = Field(description="Where the sources were searched.")
    sets: list[str] = Field(description="The label sets scored (--labels).")
    items_corrected: int = Field(description="Questions of this run whose labels a "
                                 "correction changed.")
    corrected_note: str | None = None


class HallusionBenchMetrics(BaseModel):
    """metrics.json of HallusionBench: per protocol (and under corrected labels) the paper's
    accuracies, and why the protocols differ."""

    model_config = ConfigDict(extra="forbid")

    protocols: dict[str, ProtocolMetrics]
    corrected: dict[str, ProtocolMetrics] | None = Field(
        None, description="The same under the corrected labels; null when no question of the "
                          "run has one.")
    labels: Labels
    differences: dict[str, Any] | None = Field(
        None, description="`harness.differences.DifferenceSummary`: per protocol, the "
                          "questions each cause moves; null without the paper's protocol "
                          "and another.")
