"""The shape of BlindTest's metrics.json (`metrics.summarize`): checked before the file is
written, every key known, every figure optional (absent with the reason when it cannot be
computed)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from visioneval.core.runfiles import Interval, MetricsBlock


class Scored(MetricsBlock):
    """One protocol on one task (or every row): counts, accuracy and its interval over
    items. `unparsed`: answers the protocol could not read (scored wrong)."""

    n: int
    n_errors: int
    unparsed: int
    unavailable: str | None = None
    correct: int | None = None
    accuracy: float | None = None
    accuracy_se: float | None = None
    accuracy_ci95: Interval | None = None
    accuracy_ci95_unavailable: str | None = None
    accuracy_ci95_clusters: str | None = None
    accuracy_ci95_n_clusters: int | None = None


class TaskMean(MetricsBlock):
    """The unweighted mean of the tasks' accuracies (the paper's Table 1 mean)."""

    unavailable: str | None = None
    accuracy: float | None = None
    n: int | None = None
    tasks: int | None = None
    note: str | None = None
    accuracy_se: float | None = None
    accuracy_ci95: Interval | None = None
    accuracy_ci95_unavailable: str | None = None
    accuracy_ci95_clusters: str | None = None
    accuracy_ci95_n_clusters: int | None = None


class Cell(MetricsBlock):
    """Accuracy at one value of a task's parameter, with its Wilson interval."""

    n: int
    correct: int
    accuracy: float
    accuracy_ci95: Interval


class LevelPoint(MetricsBlock):
    """Proportion correct at one level of a magnitude, with its Wilson interval."""

    level: float
    n: int
    correct: int
    p: float
    ci95: Interval


class Threshold(MetricsBlock):
    """One magnitude's psychometric fit under one protocol (thresholds.py): the level where
    ψ reaches `criterion` correct, its 95% parametric-bootstrap interval (an end outside the
    tested levels is None, open: the lower below the lowest, the upper beyond the highest),
    or status "not reached" and `reason`, no number."""

    task: str
    unit: str
    criterion: float
    guess: float
    form: str
    n_trials: int
    n_levels: int
    points: list[LevelPoint]
    status: str
    reason: str | None = None
    threshold: float | None = None
    threshold_ci95: tuple[float | None, float | None] | None = None
    slope: float | None = None
    alpha: float | None = None
    beta: float | None = None
    lapse: float | None = None
    deviance: float | None = None
    chance_p: float | None = None
    resamples: int | None = None
    lowest_level: float | None = None
    highest_level: float | None = None


class Protocol(MetricsBlock):
    """One protocol under one label set. VLMEvalKit has `subtasks` and `parameters` only;
    lmms-eval adds what it prints itself (`lmms_by_task`, `lmms_task_mean`, `dropped`)."""

    subtasks: dict[str, Scored]
    parameters: dict[str, dict[str, dict[str, Cell]]]
    thresholds: dict[str, Threshold] | None = None
    tasks: dict[str, Scored] | None = None
    accuracy: Scored | None = None
    task_mean: TaskMean | None = None
    lmms_by_task: dict[str, float] | None = None
    lmms_task_mean: float | None = None
    lmms_task_mean_unavailable: str | None = None
    dropped: list[str] | None = None
    dropped_points: float | None = None


class Labels(MetricsBlock):
    sets: list[str]
    manifest: str
    relabelled: int


class BlindTestMetrics(MetricsBlock):
    """metrics.json: per protocol, per label set; why they differ; the labels used."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    paper: dict[str, Protocol] | None = None
    lmms_eval: dict[str, Protocol] | None = Field(
        None, alias="lmms-eval", description="Written `lmms-eval` in the file.")
    vlmevalkit: dict[str, Protocol] | None = None
    differences: dict[str, Any] | None = None  # harness.differences.DifferenceSummary
    labels: Labels
