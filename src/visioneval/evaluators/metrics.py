"""metrics.json of `visioneval evaluate` (`evaluate.summarize`): per evaluator its counts,
pass rate (with its interval), score statistics and, for a judge asked several times per
case, how much of its score's uncertainty is the judge's own variation; per case each
evaluator's result."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from visioneval.core.runfiles import Interval, MetricsBlock


class VarianceComponent(MetricsBlock):
    """A part of the variance of a judge's mean score (squared units of the 0-1 score) or
    a share of it, with its 95% bootstrap interval over cases."""

    value: float
    ci95: Interval | None = None
    ci95_unavailable: str | None = None


class JudgeVariation(MetricsBlock):
    """What the uncertainty of the judge's mean score over cases is made of (Miller 2024,
    "Adding error bars to evals", section 3): the cases (between) and the judge's
    call-to-call variation (within), from each case's verdict scores."""

    cases: int = Field(description="Cases with two usable verdicts or more, the ones split.")
    left_out: int = Field(description="Processed cases with fewer than two usable verdicts "
                          "(a reply that did not parse after its repair), left out.")
    samples_per_case: float = Field(description="The mean number of usable verdicts of the "
                                    "cases split (K).")
    mean_score: float = Field(description="The mean over the cases split of each case's mean "
                              "verdict score (0-1).")
    mean_score_se: float | None = Field(None, description="Its standard error, "
                                        "sqrt((between + within / K) / cases).")
    between: VarianceComponent = Field(description="The variance of the cases' own scores.")
    within: VarianceComponent = Field(description="The variance of one verdict about its "
                                      "case's own score, the mean over cases.")
    within_share: VarianceComponent = Field(description="The share of the mean score's "
                                            "variance that is the judge's call-to-call "
                                            "variation: (within / K) / (between + within / K).")
    target_share: float = Field(description="The share the next figure aims under (0.1).")
    samples_for_target: int | None = Field(None, description="The fewest verdicts per case "
                                           "that would leave the call-to-call variation at "
                                           "most `target_share` of the variance.")
    samples_for_target_unavailable: str | None = None


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
    judge_variation: JudgeVariation | None = None
    judge_variation_unavailable: str | None = None


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




RELIABLE, TENTATIVE = 0.8, 0.667  # Krippendorff (2004, p. 241): rely on alpha >= .800,
# draw tentative conclusions from .667 to .800

Verdict = Literal["pass", "flag", "inconclusive"]
"""A check's outcome: the judge passed it, failed it (a flag on its card), or the cases
were too few or too noisy to tell."""


class Difference(MetricsBlock):
    """A paired difference over cases: the judge's own request minus the control's, its
    mean with a 95% bootstrap interval (over cases) and how many cases moved at all."""

    n: int
    mean: float
    ci95: Interval | None = None
    ci95_unavailable: str | None = None
    changed: int


class ControlCheck(MetricsBlock):
    """The blind or order control of one evaluator: the weighted score's difference (0-1)
    and each dimension's (0-10 points)."""

    evaluator: str
    n: int
    errors: int = 0
    score: Difference | None = None
    dimensions: dict[str, Difference] = {}
    identical: int = 0  # cases with every dimension the same under the control
    verdict: Verdict
    finding: str  # the verdict in words ("ignores the image", "position bias" ...)
    why: str


class ProbeCheck(MetricsBlock):
    """One kind of edit over the evaluators it applied to: how often the score dropped,
    the edit was named in the detail list the rubric asks for, and both (detected)."""

    kind: str
    detail: str
    n: int
    errors: int = 0
    dropped: int
    named: int
    detected: int
    rate: float | None = None
    ci95: Interval | None = None
    drop: Difference | None = None  # the weighted score's fall (as given minus edited)
    verdict: Verdict
    finding: str
    why: str
    examples: list[str] = []  # a few of the edits, as made


class Agreement(MetricsBlock):
    """Krippendorff's alpha (interval level) over cases, with a bootstrap 95% interval."""

    alpha: float | None = None
    ci95: Interval | None = None
    units: int
    raters: int
    unavailable: str | None = None
    reading: str | None = None  # Krippendorff's bands: reliable, tentative, unreliable


class HumanCheck(MetricsBlock):
    """One judge against people's scores on one evaluator's dimension (or all pooled)."""

    evaluator: str
    dimension: str
    n: int
    alpha: float | None = None
    alpha_ci95: Interval | None = None
    spearman: float | None = None
    spearman_p: float | None = None
    mean_abs_diff: float | None = None
    mean_diff: float | None = None  # judge minus people, 0-10 points
    unavailable: str | None = None
    points: list[tuple[float, float]] = []  # (people, judge) per case, for the chart


class JudgeCard(MetricsBlock):
    """One judge: how it was asked, its pass rates, and every check that was run."""

    judge: int  # 1 is the run's own model
    model: str | None = None  # None: the run's model (run.json's backend)
    kind: str | None = None
    temperature: float
    seeds: list[int] | None = None  # the sampling seed of each of its samples per case
    samples: int
    max_tokens: int
    prompt_sha256: str  # of the judge's instructions and every rubric the run used
    evaluators: dict[str, EvaluatorMetrics] = {}
    blind: list[ControlCheck] = []
    order: list[ControlCheck] = []
    probes: list[ProbeCheck] = []
    self_agreement: dict[str, dict[str, Agreement]] = {}
    self_agreement_unavailable: str | None = None
    humans: list[HumanCheck] = []
    flags: list[str] = []  # each failed check in one line


class HumanLabelsInfo(MetricsBlock):
    source: str
    sha256: str
    labels: int
    unused: int = Field(0, description="Scores (case, evaluator, dimension) whose case, "
                        "evaluator or dimension is not in the run: left out of every "
                        "agreement.")
    unused_named: list[str] = Field([], description="The first five of them, as `case "
                                    "evaluator dimension`.")

    def unused_line(self) -> str | None:
        """The scores left out, in one line (None: every score was the run's)."""
        if not self.unused:
            return None
        more = self.unused - len(self.unused_named)
        return (f"human labels: {self.unused} of {self.labels} scores in {self.source} are "
                "for a case, evaluator or dimension not in this run and were left out: "
                f"{'; '.join(self.unused_named)}{f' and {more} more' if more > 0 else ''}")


class JudgesMetrics(MetricsBlock):
    """Every judge's card; the judges' agreement per evaluator and dimension."""

    cards: list[JudgeCard]
    controls: list[str] = []
    panel_score: str | None = None  # mean or median, with several judges
    agreement: dict[str, dict[str, Agreement]] = {}
    agreement_unavailable: str | None = None
    human_labels: HumanLabelsInfo | None = None


class EvaluateMetrics(MetricsBlock):
    """metrics.json of `visioneval evaluate`: per evaluator, and per case (with several
    judges, the panel's score); the judges' cards when a case used a judge."""

    evaluators: dict[str, EvaluatorMetrics]
    cases: dict[str, CaseMetrics]
    judges: JudgesMetrics | None = None
