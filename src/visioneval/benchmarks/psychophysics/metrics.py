"""The shape of a psychophysics run's metrics.json (`PsychophysicsMetrics`), which checks
`summarize`'s output before it is written. A figure that could not be computed is absent and
a `reason` (or `<name>_unavailable`) says why, never 0."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Interval = tuple[float, float]


class Block(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Counts(Block):
    """One experiment's trials: answered, failed and unparsed."""
    n: int  # answered trials
    n_errors: int  # failed requests, in no figure
    n_unparsed: int  # answered, but with no feature (detection) or no yes/no


class Point(Block):
    """Proportion correct at one level of one condition, with its Wilson 95% interval."""
    experiment: str
    feature: str
    set_size: int
    spread: float = 0.0  # the distractors' jitter (heterogeneity)
    level: float
    n: int
    correct: int
    n_unparsed: int
    p: float
    ci95: Interval


class Missing(Block):
    """A level of a condition with no answered trial: absent from every figure."""
    experiment: str
    feature: str
    set_size: int
    spread: float = 0.0
    level: float
    n_errors: int
    reason: str


class Threshold(Block):
    """One psychometric fit (detection, one feature at one set size and distractor
    spread). `threshold` is the level where ψ equals
    `criterion`; with status "not reached" it, its interval and the slope are absent and
    `reason` says why. An end of `threshold_ci95` outside the tested levels is open: the
    lower end None when bootstrap refits put it below the lowest tested level, the upper
    end None when they put it beyond the highest (or never reach the criterion).
    `dispersion` is the fit's Pearson X² over its residual degrees of freedom (about 1 when
    the answers at a level vary as one binomial observer's; absent with 3 levels or fewer),
    `dispersion_p` the p of X² on those degrees of freedom."""
    feature: str
    set_size: int
    unit: str
    experiment: str = "detection"
    spread: float = 0.0
    criterion: float
    guess: float
    form: str
    n_trials: int
    n_levels: int
    status: str
    reason: str | None = None
    threshold: float | None = None
    threshold_ci95: tuple[float | None, float | None] | None = None
    slope: float | None = None
    slope_ci95: Interval | None = None
    lapse: float | None = None
    lapse_ci95: Interval | None = None
    alpha: float | None = None
    beta: float | None = None
    deviance: float | None = None
    deviance_p: float | None = None
    chance_p: float | None = None
    resamples: int = 0
    dispersion: float | None = None
    dispersion_p: float | None = None
    lowest_level: float | None = None
    highest_level: float | None = None


class Detection(Block):
    """Yes/no trials at one level of one condition: hits among target-present arrays, false
    alarms among target-absent ones, d′ and c (log-linear corrected) with 95% intervals."""
    experiment: str
    feature: str
    set_size: int
    spread: float = 0.0  # the distractors' jitter (heterogeneity)
    level: float
    unit: str
    n_signal: int
    hits: int
    n_noise: int
    false_alarms: int
    n_unparsed: int
    hit_rate: float | None = None
    false_alarm_rate: float | None = None
    dprime: float | None = None
    dprime_ci95: Interval | None = None
    c: float | None = None
    c_ci95: Interval | None = None
    reason: str | None = None


class SetSize(Block):
    """Proportion correct against set size for one condition (its levels pooled)."""
    experiment: str
    feature: str
    set_sizes: list[int]
    n: list[int]
    correct: list[int]
    logit_slope: float
    logit_slope_ci95: Interval
    points_per_doubling: float
    points_ci95: Interval


class ConjunctionDifference(Block):
    """Feature minus conjunction proportion correct at one set size (yes/no trials)."""
    set_size: int
    feature_condition: str  # e.g. "presence color 16.7 dE00"
    feature: float
    conjunction: float
    difference: float
    difference_ci95: Interval
    p_value: float  # Fisher's exact test


class PsychophysicsMetrics(Block):
    """metrics.json of psychophysics: the fit settings, the counts, then thresholds
    (detection), proportion correct per level, d′ and c (yes/no), set-size effects and
    feature against conjunction search; a list that could not be made is empty and its
    `_unavailable` key says why (docs/psychophysics.md)."""
    criterion: float
    form: str
    guess: float
    dispersion_model: str = "binomial"  # the bootstrap's counts: binomial or fitted
    n: int
    n_errors: int
    n_unparsed: int
    experiments: dict[str, Counts]
    thresholds: list[Threshold] = []
    thresholds_unavailable: str | None = None
    points: list[Point] = []
    missing_levels: list[Missing] = []
    detection_theory: list[Detection] = []
    detection_theory_unavailable: str | None = None
    set_size: list[SetSize] = []
    set_size_unavailable: str | None = None
    conjunction_vs_feature: list[ConjunctionDifference] = []
    conjunction_vs_feature_unavailable: str | None = None
