"""The drawers of the charts with axes of numbers (`core.figures`): psychometric
functions, named lines of points, a scatter against x = y, and tested points against a
reference. Shapes in points on `charts.Chart`, written by its template."""

from __future__ import annotations

import math
from collections.abc import Callable

from visioneval.core import figures
from visioneval.report.charts import MISS, PALETTE, SMALL, TITLE, Chart, Frame, axes, text_width
from visioneval.stats.psychometric import psi
from visioneval.stats.weber_fit import weber_psi

CURVE, POINT, BAND_FILL, THRESHOLD = "#4c72b0", "#111", "#f6dcc8", "#dd8452"
REFERENCE_BAND = "#e8eef7"


def mapping(axis: figures.Axis, start: float, length: float) -> Callable[[float], float]:
    """Where a value of `axis` is drawn, in points: `start` is where its low end is and
    `length` how far its high end is from there (a y axis: the bottom, and minus the
    height)."""
    if axis.scale == "linear":
        lo, hi = axis.low, axis.high

        def at(value: float) -> float:
            return start + (value - lo) / (hi - lo) * length
        return at
    log = math.log2 if axis.scale == "log2" else math.log10
    lo, hi = log(axis.low), log(axis.high)

    def at_log(value: float) -> float:
        return start + (log(max(value, 1e-12)) - lo) / (hi - lo) * length
    return at_log


def _axes(chart: Chart, frame: Frame, x: figures.Axis, y: figures.Axis,
          x_of: Callable[[float], float], y_of: Callable[[float], float]) -> None:
    axes(chart, frame, [(y_of(t.value), t.label) for t in y.ticks],
         [(x_of(t.value), t.label) for t in x.ticks], y.label, x.label)


def psychometric(figure: figures.Psychometric) -> str:
    """Proportion correct per level (log x) with its intervals, the fitted ψ, the threshold
    with its interval, and the guess rate dashed. One series (a run's page): black points,
    the interval as a band. Several (the compare page): a colour each, points set a little
    apart, each threshold a bar at the criterion's height, and a legend."""
    series = figure.series
    one = len(series) == 1
    first = series[0]
    unit, title = figure.unit, figure.title
    chart = Chart(title)
    frame = Frame()
    left, top, width, height = frame.left, frame.top, frame.width, frame.height
    bottom = frame.bottom
    x_of = mapping(figure.x, left, width)
    marked = figure.marked

    def x_in(level: float | None, open_at: float) -> float:
        """An interval end on the axis; an open end (None) at the axis' edge `open_at`."""
        return open_at if level is None else min(max(x_of(level), left), left + width)

    def y_of(p: float) -> float:
        return bottom - p * height

    def colour(i: int, single: str) -> str:
        return single if one else PALETTE[i % len(PALETTE)]

    chart.text(4, 16, title, anchor="start", size=TITLE)
    if one and first.threshold is not None and first.threshold_interval:
        band = first.threshold_interval
        x0, x1 = x_in(band[0], left), x_in(band[1], left + width)
        chart.rect(x0, top, x1 - x0, height, BAND_FILL,
                   f"{marked} 95% interval: {first.interval_text} {unit}")
    for p in (0.0, 0.25, 0.5, 0.75, 1.0):
        chart.line(left - 4, y_of(p), left, y_of(p))
        chart.text(left - 6, y_of(p), f"{p:g}", anchor="end", baseline="central")
    for tick in figure.x.ticks:
        chart.line(x_of(tick.value), bottom, x_of(tick.value), bottom + 4)
        chart.text(x_of(tick.value), bottom + 14, tick.label)
    chart.line(left, top, left, bottom)
    chart.line(left, bottom, left + width, bottom)
    chart.text(12, top + height / 2, figure.y_label, baseline="central", rotate=-90)
    chart.text(left + width / 2, bottom + 28, figure.x.label)
    guess = figure.guess
    step = 6.0
    x = left
    while guess is not None and x < left + width:  # dashed
        chart.line(x, y_of(guess), min(x + step / 2, left + width), y_of(guess), MISS, "guess")
        x += step
    xs = _along(figure.x)
    for i, s in enumerate(series):
        fit = s.fit
        if fit is None:
            continue
        ys = [_fitted(v, fit) for v in xs]
        for (xa, ya), (xb, yb) in zip(zip(xs, ys, strict=True),
                                      list(zip(xs, ys, strict=True))[1:], strict=False):
            chart.line(x_of(xa), y_of(ya), x_of(xb), y_of(yb), colour(i, CURVE), "fit")
    for i, s in enumerate(series):
        threshold = s.threshold
        if threshold is None:
            continue
        if one:
            chart.line(x_of(threshold), top, x_of(threshold), bottom, THRESHOLD, marked)
            chart.text(x_of(threshold) + 3, top + 8, f"{threshold:.3g} {unit}",
                       anchor="start", size=SMALL)
            continue
        shift = (i - (len(series) - 1) / 2) * 5.0
        y = y_of(s.criterion) + shift
        chart.line(x_of(threshold), y, x_of(threshold), bottom, colour(i, ""), "threshold")
        found = s.threshold_interval
        if found:
            x0, x1 = x_in(found[0], left), x_in(found[1], left + width)
            chart.line(x0, y, x1, y, colour(i, ""), "threshold-interval")
            for end, capped in ((x0, found[0] is not None), (x1, found[1] is not None)):
                if capped:
                    chart.line(end, y - 3, end, y + 3, colour(i, ""), "threshold-interval-cap")
    for i, s in enumerate(series):
        shift = 0.0 if one else (i - (len(series) - 1) / 2) * 4.0
        for point in s.points:
            cx, cy = x_of(point.level) + shift, y_of(point.p)
            low, high = point.interval
            if one:
                chart.whisker(cx, y_of(low), cx, y_of(high), 4.0)
            else:
                chart.line(cx, y_of(low), cx, y_of(high), colour(i, ""), "whisker")
            name = f"{s.name}, " if s.name else ""
            chart.rect(cx - 2.5, cy - 2.5, 5, 5, colour(i, POINT),
                       f"{name}{point.level:g} {unit}: {point.correct}/{point.n} correct")
    key_y = bottom + 44
    chart.width = max(left + width + 14, text_width(title, TITLE) + 12)
    if one:
        chart.line(left, key_y, left + 14, key_y, CURVE, "fit")
        chart.text(left + 18, key_y, "fitted ψ", anchor="start", baseline="central")
        if guess is not None:
            _guess_key(chart, left + 80, key_y, guess)
        chart.rect(left + 160, key_y - 4, 10, 8, BAND_FILL)
        chart.text(left + 174, key_y, f"{marked} 95%", anchor="start", baseline="central")
        chart.height = key_y + 12
        return chart.render()
    for i, s in enumerate(series):
        y = key_y + 14 * i
        chart.rect(left, y - 4, 10, 8, colour(i, ""))
        text = f"{s.name}: {s.reading}"
        chart.text(left + 14, y, text, anchor="start", baseline="central", size=8)
        chart.width = max(chart.width, left + 14 + text_width(text, 8) + 8)
    y = key_y + 14 * len(series) + 2
    if guess is not None:
        _guess_key(chart, left, y, guess)
    text = (f"bars: {marked} and 95% interval at {first.criterion:g} correct" if guess
            is not None else f"bars: {marked} and 95% interval")
    chart.text(left + 80, y, text, anchor="start", baseline="central", size=8)
    chart.width = max(chart.width, left + 80 + text_width(text, 8) + 8)
    chart.height = y + 12
    return chart.render()


def _along(axis: figures.Axis, count: int = 80) -> list[float]:
    """Where a fitted curve is evaluated: evenly along the axis as it is drawn."""
    if axis.scale == "linear":
        return [axis.low + (axis.high - axis.low) * i / count for i in range(count + 1)]
    log, power = (math.log2, 2.0) if axis.scale == "log2" else (math.log10, 10.0)
    lo, hi = log(axis.low), log(axis.high)
    return [power ** (lo + (hi - lo) * i / count) for i in range(count + 1)]


def _fitted(x: float, fit: figures.SigmoidFit) -> float:
    if fit.form == "gaussian":
        shape = 0.5 * math.erfc(-(x - fit.alpha) / (fit.beta * math.sqrt(2.0)))
        return fit.guess + (1.0 - fit.guess - fit.lapse) * shape
    if fit.form == "weber":
        shape = 2.0 * weber_psi(x, fit.alpha) - 1.0
        return fit.guess + (1.0 - fit.guess - fit.lapse) * shape
    return psi(x, fit.alpha, fit.beta, fit.guess, fit.lapse, fit.form)


def _guess_key(chart: Chart, x: float, y: float, guess: float) -> None:
    """The dashed guess line's key, with the chart's own guess rate (1/3, 0.5, ...)."""
    chart.line(x, y, x + 4, y, MISS, "guess")
    chart.line(x + 8, y, x + 12, y, MISS, "guess")
    said = "1/3" if abs(guess - 1 / 3) < 1e-9 else f"{guess:g}"
    chart.text(x + 16, y, f"guess {said}", anchor="start", baseline="central")


def lines(figure: figures.Lines) -> str:
    """Each named line in its palette colour, its points joined, square markers (unless the
    line has none), a whisker where a point has an interval, and a key below the axes."""
    chart = Chart(figure.title)
    frame = Frame()
    x_of = mapping(figure.x, frame.left, frame.width)
    y_of = mapping(figure.y, frame.bottom, -frame.height)
    _axes(chart, frame, figure.x, figure.y, x_of, y_of)
    if figure.chance is not None:
        chart.line(frame.left, y_of(figure.chance), frame.left + frame.width,
                   y_of(figure.chance), MISS, "guess")
    left, y_key = frame.left, frame.bottom + 44
    for i, line in enumerate(figure.lines):
        colour = PALETTE[i % len(PALETTE)]
        points = [(x_of(p.x), y_of(p.y), p.label) for p in line.points]
        for (xa, ya, _), (xb, yb, _) in zip(points, points[1:], strict=False):
            chart.line(xa, ya, xb, yb, colour, "series")
        for point, (cx, _, _) in zip(line.points, points, strict=True):
            if point.interval is not None:
                low, high = point.interval

                def inside(y: float) -> float:
                    return min(max(y, frame.top), frame.bottom)
                chart.whisker(cx, frame.bottom if low is None else inside(y_of(low)), cx,
                              frame.top if high is None else inside(y_of(high)), 4.0)
        for cx, cy, tip in points if line.markers else ():
            chart.rect(cx - 2.5, cy - 2.5, 5, 5, colour, tip)
        chart.rect(left, y_key + 14 * i - 4, 10, 8, colour)
        chart.text(left + 14, y_key + 14 * i, line.name, anchor="start", baseline="central")
    chart.width = left + frame.width + 14
    chart.height = y_key + 14 * len(figure.lines) + 4
    return chart.render()


def scatter(figure: figures.Scatter) -> str:
    """Each group's points in its palette colour on a square plot, the line where x = y
    (points above it: a larger y than x), and a key at the right."""
    chart = Chart(figure.title)
    frame = Frame(width=200.0, height=200.0)
    left, bottom, size = frame.left, frame.bottom, frame.width
    x_of = mapping(figure.x, left, size)
    y_of = mapping(figure.y, bottom, -size)
    _axes(chart, frame, figure.x, figure.y, x_of, y_of)
    chart.line(left, bottom, left + size, bottom - size, MISS, "reference")
    for i, group in enumerate(figure.groups):
        colour = PALETTE[i % len(PALETTE)]
        for x, y in group.points:
            chart.rect(x_of(x) - 2.5, y_of(y) - 2.5, 5, 5, colour,
                       f"{group.name}: {figure.x.label} {x:g}, {figure.y.label} {y:g}")
        y_key = frame.top + 12 * i
        chart.rect(left + size + 16, y_key - 4, 8, 8, colour)
        chart.text(left + size + 28, y_key, group.name, anchor="start", baseline="central")
    chart.width = left + size + 28 + max((text_width(g.name) for g in figure.groups),
                                         default=0) + 8
    chart.height = max(bottom + 36, frame.top + 12 * len(figure.groups) + 8)
    return chart.render()


def against_reference(figure: figures.AgainstReference) -> str:
    """Shares in percent against the x axis, each with its whisker, filled where a test
    found it different from the reference and open otherwise, joined by a line; the
    reference as a grey line with its band."""
    chart = Chart(figure.title)
    frame = Frame()
    left, width, height, bottom = frame.left, frame.width, frame.height, frame.bottom
    x_of = mapping(figure.x, left, width)

    def y_of(share: float) -> float:
        return bottom - share * height

    axes(chart, frame, [(y_of(p), f"{100 * p:g}") for p in (0.0, 0.25, 0.5, 0.75, 1.0)],
         [(x_of(t.value), t.label) for t in figure.x.ticks], "percent", figure.x.label)
    stored = figure.reference
    if stored is not None:
        if stored.interval:
            chart.rect(left, y_of(stored.interval[1]), width,
                       y_of(stored.interval[0]) - y_of(stored.interval[1]), REFERENCE_BAND,
                       stored.label)
        chart.line(left, y_of(stored.value), left + width, y_of(stored.value), MISS,
                   "reference")
        chart.text(left + width + 4, y_of(stored.value), stored.name, anchor="start",
                   baseline="central")
    colour = PALETTE[0]
    line = []
    for point in figure.points:
        x, y = x_of(point.x), y_of(point.value)
        if point.interval:
            chart.whisker(x, y_of(point.interval[0]), x, y_of(point.interval[1]), 5)
        chart.rect(x - 3, y - 3, 6, 6, colour if point.differs else "#ffffff", point.label)
        if not point.differs:  # an open square: its outline
            for x1, y1, x2, y2 in ((x - 3, y - 3, x + 3, y - 3), (x + 3, y - 3, x + 3, y + 3),
                                   (x + 3, y + 3, x - 3, y + 3), (x - 3, y + 3, x - 3, y - 3)):
                chart.line(x1, y1, x2, y2, colour)
        line.append((x, y))
    for (xa, ya), (xb, yb) in zip(line, line[1:], strict=False):
        chart.line(xa, ya, xb, yb, colour, "series")
    chart.width = left + width + 40
    chart.height = bottom + 36
    return chart.render()
