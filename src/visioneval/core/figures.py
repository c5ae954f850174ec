"""What a chart shows, as data: numbers, labels and units, never pixels or SVG. A
benchmark's sections hand these to the page inside `blocks.Charts`; `report.drawing` has
one drawer per kind, so every benchmark's charts look alike and none draws its own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from visioneval.core.marks import Interval

Scale = Literal["linear", "log2", "log10"]


def percent_interval(found: Sequence[float] | None) -> Interval | None:
    """A metrics.json interval of fractions ([low, high]) in percent; None when absent."""
    return None if not found else (100 * found[0], 100 * found[1])


@dataclass(frozen=True)
class Tick:
    value: float  # in the axis' units
    label: str


@dataclass(frozen=True)
class Axis:
    """One axis: its label, its ends (in its units, the ends of the drawn axis) and where
    its ticks are. A log axis is spaced by the logarithm of its values."""
    label: str
    low: float
    high: float
    ticks: list[Tick]
    scale: Scale = "linear"


@dataclass(frozen=True)
class BarSeries:
    """One colour of grouped bars: a value per category (None: no value, shown "n/a") and
    optionally its 95% interval (in the values' units)."""
    name: str
    values: list[float | None]
    intervals: list[Interval | None] | None = None


@dataclass(frozen=True)
class GroupedBars:
    """Bars per category, one colour per series, the value written on each bar; the axis
    runs from 0 to 1.1 × `ymax` (to the largest value or interval end when None)."""
    title: str
    categories: list[str]
    series: list[BarSeries]
    ylabel: str
    ymax: float | None = 100.0


@dataclass(frozen=True)
class Share:
    """One part of the 100% bars: its percent per category; a part that means a miss (no
    answer named) is drawn grey, never in a series colour."""
    name: str
    percents: list[float]
    miss: bool = False


@dataclass(frozen=True)
class StackedShares:
    """Horizontal 100% bars: one row per category, one colour per part."""
    title: str
    categories: list[str]
    parts: list[Share]
    xlabel: str = "percent"


@dataclass(frozen=True)
class CountMatrix:
    """Counts in a matrix (a confusion view): `counts[i][j]` for row i, column j."""
    title: str
    rows: list[str]
    columns: list[str]
    counts: list[list[int]]
    xlabel: str
    ylabel: str


@dataclass(frozen=True)
class RateBars:
    """A percent per label (long labels: one horizontal bar a row); None: no result.
    `intervals`: the rates' 95% intervals, in percent."""
    title: str
    labels: list[str]
    rates: list[float | None]
    intervals: list[Interval | None] | None = None


@dataclass(frozen=True)
class SigmoidFit:
    """A fitted psychometric function ψ(x) = γ + (1 − γ − λ)·F(x; α, β); "gaussian": F the
    cumulative Gaussian of mean α and SD β (a comparison's, with γ = λ: tied lapses);
    "weber": a ratio x of two magnitudes told apart, F = 2Φ((x − 1)/(α·√(1 + x²))) − 1
    (0 at x ≤ 1), α the Weber fraction, β unused."""
    alpha: float
    beta: float
    guess: float
    lapse: float
    form: Literal["weibull", "logistic", "gaussian", "weber"]


@dataclass(frozen=True)
class LevelPoint:
    """Proportion correct at one stimulus level, with its 95% interval and counts."""
    level: float
    p: float
    interval: Interval
    correct: int
    n: int


@dataclass(frozen=True)
class PsychometricSeries:
    """One observer's curve: its points, its fit (None: none), its threshold (None: not
    reached) with its 95% interval (an end None: open, below or beyond the tested levels) at
    proportion `criterion`. `interval_text` and `reading` say the interval and the threshold
    in words."""
    points: list[LevelPoint]
    fit: SigmoidFit | None
    criterion: float
    threshold: float | None = None
    threshold_interval: tuple[float | None, float | None] | None = None
    interval_text: str = ""
    reading: str = ""
    name: str = ""


@dataclass(frozen=True)
class Psychometric:
    """Proportion correct against level (`x`, a log or linear axis in `unit`), the guess
    rate dashed (None: none, a comparison's curve). One series: its threshold interval as a
    band; several: one colour each, with a legend. `y_label` and `marked` say what the
    points count and what the vertical line marks (a comparison: its PSE)."""
    title: str
    x: Axis
    unit: str
    guess: float | None
    series: list[PsychometricSeries]
    y_label: str = "proportion correct"
    marked: str = "threshold"


@dataclass(frozen=True)
class LinePoint:
    """A point of a line; `interval`: its y's 95% interval, drawn as a whisker (an end
    None is open: the whisker runs to the axis' edge)."""
    x: float
    y: float
    label: str  # what the point says on hover
    interval: tuple[float | None, float | None] | None = None


@dataclass(frozen=True)
class NamedLine:
    """`markers` False: the line alone (a fitted curve), its points not marked."""
    name: str
    points: list[LinePoint]
    markers: bool = True


@dataclass(frozen=True)
class Lines:
    """Named lines of points, one colour each, with a key; `chance`: a grey line at that
    y (d′ = 0, say)."""
    title: str
    x: Axis
    y: Axis
    lines: list[NamedLine]
    chance: float | None = None


@dataclass(frozen=True)
class PointGroup:
    name: str
    points: list[tuple[float, float]]  # (x, y)


@dataclass(frozen=True)
class Scatter:
    """Points of several groups on a square plot, with the line where x = y and a key."""
    title: str
    x: Axis
    y: Axis
    groups: list[PointGroup]


@dataclass(frozen=True)
class TestedPoint:
    """A value (a share, 0 to 1) with its interval; `differs`: a test found it different
    from the reference (drawn filled, open otherwise)."""
    x: float
    value: float
    interval: Interval | None
    differs: bool
    label: str


@dataclass(frozen=True)
class Reference:
    """The value the points are read against (a share), its interval and what it is."""
    value: float
    interval: Interval | None
    label: str  # the band's hover text
    name: str  # written at the line's end


@dataclass(frozen=True)
class AgainstReference:
    """Shares (shown in percent) against an axis, joined by a line, beside a reference
    line with its band."""
    title: str
    x: Axis
    points: list[TestedPoint]
    reference: Reference | None


@dataclass(frozen=True)
class Histogram:
    """One panel: the distribution of a metric, one colour per group of values."""
    title: str
    groups: list[tuple[str, list[float]]]  # (name, values)


@dataclass(frozen=True)
class Histograms:
    """Panels of histograms, four a row, counting samples."""
    panels: list[Histogram]
    ylabel: str = "samples"
    bins: int = 20


@dataclass(frozen=True)
class WaterfallStep:
    """One bar of a waterfall: a total (drawn from the axis) or a step (drawn from the
    running value before it to the one after); `interval` in the same units: a total's own
    interval, a step's interval of its points."""
    label: str
    before: float
    after: float
    total: bool = False
    interval: Interval | None = None


@dataclass(frozen=True)
class Waterfall:
    """From one number to another, one step at a time (percent)."""
    title: str
    steps: list[WaterfallStep]
    xlabel: str = "percent"


Chart = (GroupedBars | StackedShares | CountMatrix | RateBars | Psychometric | Lines
         | Scatter | AgainstReference | Histograms | Waterfall)
CHART_KINDS = (GroupedBars, StackedShares, CountMatrix, RateBars, Psychometric, Lines,
               Scatter, AgainstReference, Histograms, Waterfall)
