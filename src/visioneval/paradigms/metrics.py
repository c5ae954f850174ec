"""The shape of a classic paradigm's metrics.json: per condition its points and its fit, the
paradigm-level summaries and the published human values. A figure that could not be
computed is absent and `reason` says why, never 0."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Interval = tuple[float, float]
OpenInterval = tuple[float | None, float | None]


class Block(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Point(Block):
    """One level: answered trials, the counted answers (correct for a forced choice, the
    `positive` option for a comparison) and their share with its Wilson 95% interval."""
    level: float
    n: int
    k: int
    p: float
    ci95: Interval
    n_unparsed: int = 0


class Judged(Block):
    """One level of an estimate: the answers read as a number within the asked range, their
    median and their midmean error (None when none was), and the answers left out."""
    level: float
    n: int
    median: float | None = None
    error: float | None = None
    n_unparsed: int = 0
    n_out_of_range: int = 0


class Scaled(Block):
    """A curve's figure in another unit (the threshold as a share of the segment's length)."""
    name: str
    unit: str
    value: float
    ci95: OpenInterval | None = None


class OwnFigure(Block):
    """The figure of a paradigm's own model of a curve's counts, where the paradigm fits
    them itself (a Weber fraction w): an interval end None where the tested levels cannot
    tell a smaller or a larger value apart; `about`, the model in one sentence."""
    name: str
    unit: str
    value: float | None = None
    ci95: OpenInterval | None = None
    about: str = ""


class Curve(Block):
    """One condition's curve and fit. Forced choice: `threshold` (the level where ψ reaches
    `criterion` correct, γ = `guess`), slope and β of the Weibull, lapse, dispersion.
    Comparison: `pse` (50% point), `jnd` (0.674σ), σ and the tied lapse. Estimate: `error`
    (the midmean of log2(|judged − true| + 1/8), Cleveland & McGill 1984) with its
    bootstrap interval, per level in `judged`, and the answers out of the asked range.
    `rank`: the curve's place among the run's curves by its figure (1: the most accurate),
    beside `published_rank`, people's. A paradigm's own model (`own_figure`): its figure,
    with the threshold, lapse and dispersion of the same fit and `form` naming its ψ. A
    figure absent with status "not reached" (an estimate's "not measured") and `reason`
    saying why; a control's curve (status "control") has its points and no fit."""
    condition: str
    kind: str
    unit: str
    n: int
    n_errors: int
    n_unparsed: int
    points: list[Point]
    n_out_of_range: int = 0
    status: str
    reason: str | None = None
    guess: float | None = None
    criterion: float | None = None
    form: str | None = None
    threshold: float | None = None
    threshold_ci95: OpenInterval | None = None
    bridged: bool = False  # the interval widened by bootstrap bridging (Paradigm.bridged)
    alpha: float | None = None
    beta: float | None = None
    slope: float | None = None
    lapse: float | None = None
    dispersion: float | None = None
    dispersion_p: float | None = None
    pse: float | None = None
    pse_ci95: OpenInterval | None = None
    jnd: float | None = None
    jnd_ci95: OpenInterval | None = None
    sigma: float | None = None
    error: float | None = None
    error_ci95: Interval | None = None
    judged: list[Judged] = []
    rank: float | None = None
    published_rank: float | None = None
    scaled: list[Scaled] = []
    own_figure: OwnFigure | None = None
    note: str = ""
    chart: str = ""  # the report chart it is drawn on with the curves sharing it


class SummaryBlock(Block):
    name: str
    unit: str
    value: float | None = None
    ci95: OpenInterval | None = None
    reason: str | None = None
    note: str = ""
    headline: bool = True
    width: bool = False  # a width's interval: its open ends read as a JND's do


class Human(Block):
    quantity: str
    value: str
    source: str
    conditions: str
    comparable: str


class ParadigmMetrics(Block):
    paradigm: str
    title: str
    kind: str
    unit: str
    counted: str  # what the curves' shares count ("correct"; a comparison's "'right'")
    n: int
    n_errors: int
    n_unparsed: int
    bootstrap: int
    dispersion_model: str = "binomial"  # how a forced choice's bootstrap simulated counts
    curves: list[Curve]
    n_out_of_range: int = 0
    ranked_by: str = ""
    summaries: list[SummaryBlock] = []
    human: list[Human] = []
