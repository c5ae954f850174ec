"""metrics.json's shape for BLINK (metrics.py writes it): read when the command line starts,
so it holds the models alone."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from visioneval.core.runfiles import Interval, MetricsBlock


class TaskCell(MetricsBlock):
    n: int = Field(description="Questions of the task scored.")
    accuracy: float


class LabelSetBlock(MetricsBlock):
    """One protocol under one label set (`Tally.block`)."""

    n: int = Field(description="Questions scored.")
    n_errors: int = Field(description="Failed requests: never scored.")
    unavailable: str | None = None
    n_tasks: int | None = None
    per_task: dict[str, TaskCell] | None = None
    macro: float | None = Field(None, description="Unweighted mean of the task accuracies "
                                "(the paper's Total, lmms-eval's blink).")
    macro_se: float | None = None
    macro_ci95: Interval | None = None
    macro_ci95_unavailable: str | None = None
    macro_ci95_clusters: str | None = None
    macro_ci95_n_clusters: int | None = None
    micro: float | None = Field(None, description="Mean over every question (VLMEvalKit's "
                                "Overall).")
    micro_se: float | None = None
    micro_ci95: Interval | None = None
    micro_ci95_unavailable: str | None = None
    micro_ci95_clusters: str | None = None
    micro_ci95_n_clusters: int | None = None


class ProtocolBlock(MetricsBlock):
    original: LabelSetBlock | None = None
    corrected: LabelSetBlock | None = None
    unparsed: dict[str, int] = Field(description="Answers it could not read, by reason "
                                     "(scored wrong).")
    judge: dict[str, int] | None = Field(None, description="A judged reading (`paper+judge`, "
                                         "`vlmevalkit+judge`): answers the judge was asked "
                                         "about, read, named no option, left to VLMEvalKit's "
                                         "random pick, failed (errors).")


class CorrectionsBlock(MetricsBlock):
    version: str
    items: list[str]
    effect: dict[str, dict[str, float]] | None = None


class BlinkMetrics(MetricsBlock):
    """metrics.json of BLINK."""

    protocols: dict[str, ProtocolBlock]
    readings: dict[str, str] = Field(description="How each protocol read its answers: by "
                                     "rule, or with the judge model named.")
    corrections: CorrectionsBlock
    differences: dict[str, Any] | None = None
