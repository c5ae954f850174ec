"""metrics.json of `visioneval evaluate` (`evaluate.summarize`): per evaluator its counts,
pass rate (with its interval) and score statistics; per case each evaluator's result."""

from __future__ import annotations

from typing import Literal

from visioneval.core.runfiles import Interval, MetricsBlock


class EvaluatorMetrics(MetricsBlock):
    """One evaluator over every case; rates over processed results, errors excluded."""

    n: int
    processed: int
    errors: int
    skipped: int
    passed: int
    unavailable: str | None = None
    pass_rate: float | None = None
    mean_score: float | None = None
    score_stdev: float | None = None
    pass_rate_se: float | None = None
    pass_rate_ci95: Interval | None = None
    pass_rate_ci95_unavailable: str | None = None


class CaseResult(MetricsBlock):
    """One evaluator's result on one case."""

    status: Literal["processed", "error", "skipped"]
    score: float | None = None
    passed: bool


class CaseMetrics(MetricsBlock):
    """One case: each evaluator's result, whether all passed, their mean score."""

    evaluators: dict[str, CaseResult]
    passed_all: bool
    mean_score: float | None = None


class EvaluateMetrics(MetricsBlock):
    """metrics.json of `visioneval evaluate`: per evaluator, and per case."""

    evaluators: dict[str, EvaluatorMetrics]
    cases: dict[str, CaseMetrics]
