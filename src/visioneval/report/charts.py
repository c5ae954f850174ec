"""Charts as inline SVG drawn by a jinja2 template (`templates/chart.svg`): labelled axes,
values on the bars, readable without network. Python places rectangles, lines and texts;
the template writes them and escapes every text. No matplotlib: importing it and drawing
with it cost about 1 s of a 1,000-sample run's end-of-run report (docs/PERFORMANCE.md)."""

from __future__ import annotations

import itertools
import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from visioneval.core.figures import Share
from visioneval.report import svgtemplate

# Series colours carry no verdict: green and red are left out, a reader takes them for right
# and wrong. Outcomes have their own (as the sample browser's badges in report.css).
PALETTE = ("#4c72b0", "#dd8452", "#8172b3", "#937860", "#da8bc3", "#64b5cd", "#4d5b6a")
RIGHT, WRONG, FAILED, MISS = "#2e7d32", "#c62828", "#f2a900", "#757575"
# ColorBrewer "Blues" (9 classes), light to dark: the heatmap's scale.
BLUES = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5",
         "#08519c", "#08306b")
AXIS, GRID_TEXT = "#444", "#222"
WHISKER = "#111"  # error bars: darker than the axes, visible on every palette colour
INTERVAL_LABEL = "95% interval"
FONT, SMALL, TITLE = 9, 7, 10  # font sizes (points): axis text, values on bars, title
PIXELS_PER_POINT = 4 / 3  # drawn in points (as matplotlib's were), shown at CSS pixels


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    fill: str
    tip: str = ""  # shown on hover


Interval = tuple[float, float]
"""(low, high) in the units of the values it belongs to."""


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str = AXIS
    role: str = ""  # written as the line's class: "whisker" for error bars


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    lines: tuple[str, ...]
    anchor: str = "middle"  # start | middle | end
    baseline: str = "auto"  # auto (y is the baseline) | central
    size: int = FONT
    fill: str = GRID_TEXT
    rotate: float = 0.0

    @property
    def line_height(self) -> float:
        return round(self.size * 1.2, 1)

    @property
    def first_dy(self) -> float:
        """Moves the first of several lines up so the block is centred on y."""
        return round(-(len(self.lines) - 1) / 2 * self.line_height, 1)


@dataclass
class Chart:
    """Shapes in points, origin top left; the template draws rects, then lines, then texts."""
    title: str
    width: float = 0.0  # points, the viewBox
    height: float = 0.0

    @property
    def shown_width(self) -> int:
        return math.ceil(self.width * PIXELS_PER_POINT)

    @property
    def shown_height(self) -> int:
        return math.ceil(self.height * PIXELS_PER_POINT)
    rects: list[Rect] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)

    def rect(self, x: float, y: float, w: float, h: float, fill: str, tip: str = "") -> None:
        self.rects.append(Rect(_r(x), _r(y), _r(max(0.0, w)), _r(max(0.0, h)), fill, tip))

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str = AXIS,
             role: str = "") -> None:
        self.lines.append(Line(_r(x1), _r(y1), _r(x2), _r(y2), stroke, role))

    def whisker(self, x1: float, y1: float, x2: float, y2: float, cap: float,
                role: str = "whisker") -> None:
        """An error bar from (x1, y1) to (x2, y2), horizontal or vertical, with a cap
        `cap` long across each end; its lines have the class `role` (caps `role`-cap)."""
        self.line(x1, y1, x2, y2, WHISKER, role)
        across_x, across_y = (cap / 2, 0.0) if x1 == x2 else (0.0, cap / 2)
        for x, y in ((x1, y1), (x2, y2)):
            self.line(x - across_x, y - across_y, x + across_x, y + across_y, WHISKER,
                      f"{role}-cap")

    def text(self, x: float, y: float, text: str | Sequence[str], **style) -> None:
        lines = (text,) if isinstance(text, str) else tuple(text)
        self.texts.append(Text(_r(x), _r(y), lines, **style))

    def render(self) -> str:
        self.width, self.height = math.ceil(self.width), math.ceil(self.height)
        return svgtemplate.chart_template().render(c=self).strip()


def _r(value: float) -> float:
    return round(value, 1)


def text_width(text: str, size: float = FONT) -> float:
    """A generous estimate of the width of `text` in a DejaVu-like sans font: the page has
    no font metrics, so labels get room for wide glyphs rather than overlap."""
    em = 0.0
    for ch in text:
        if ch in "il.,:;'|!I ()[]":
            em += 0.35
        elif ch in "mwMW@%" or ord(ch) > 0x2E80:  # wide Latin and CJK
            em += 0.95
        elif ch.isupper() or ch.isdigit():
            em += 0.7
        else:
            em += 0.62
    return em * size


def ticks(top: float) -> list[float]:
    """Round tick values from 0 to at most `top`: 2 to 7 of them."""
    if top <= 0:
        return [0.0]
    raw = top / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(int(top / step + 1e-9) + 1)]


def _tick_label(value: float) -> str:
    return f"{value:g}" if value == int(value) or abs(value) >= 1 else f"{value:.2g}"


def _value_text(value: float | None, ymax: float | None) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    return f"{value:.1f}" if ymax == 100 else f"{value:.2f}"


def _interval(found: Sequence[float] | None) -> Interval | None:
    """(low, high) of a given interval, None when absent or not a number."""
    if found is None or len(found) != 2 or any(v is None or math.isnan(v) for v in found):
        return None
    low, high = sorted((float(found[0]), float(found[1])))
    return low, high


def _interval_text(span: Interval, ymax: float | None) -> str:
    return (f"{INTERVAL_LABEL} {_value_text(span[0], ymax)} to "
            f"{_value_text(span[1], ymax)}")


def _interval_key(chart: Chart, x: float, y: float, horizontal: bool = False) -> float:
    """A whisker (turned as the chart's are) and what it means, from (x, y); returns the
    bottom."""
    if horizontal:
        chart.whisker(x, y + 7, x + 12, y + 7, 6, role="key")
    else:
        chart.whisker(x + 5, y + 1, x + 5, y + 13, 6, role="key")
    chart.text(x + 16, y + 7, f"error bars: {INTERVAL_LABEL}", anchor="start",
               baseline="central", size=8)
    chart.width = max(chart.width, x + 16 + text_width(f"error bars: {INTERVAL_LABEL}", 8))
    return y + 15


def _legend(chart: Chart, names: Sequence[str], x: float, y: float, per_row: int,
            colours: Sequence[str] = PALETTE) -> float:
    """Colour squares and names from (x, y) down, `per_row` a row; returns the bottom."""
    widths = [14 + text_width(n, 8) + 14 for n in names]
    column = max(widths, default=0)
    for i, name in enumerate(names):
        cx, cy = x + (i % per_row) * column, y + (i // per_row) * 15
        chart.rect(cx, cy + 2, 10, 10, colours[i % len(colours)])
        chart.text(cx + 14, cy + 7, name, anchor="start", baseline="central", size=8)
    rows = (len(names) + per_row - 1) // per_row
    chart.width = max(chart.width, x + min(per_row, len(names)) * column)
    return y + rows * 15


def grouped_bars(categories: Sequence[str], series: Mapping[str, Sequence[float | None]],
                 title: str, ylabel: str, ymax: float | None = 100.0,
                 intervals: Mapping[str, Sequence[Interval | None]] | None = None) -> str:
    """Bars per category, one colour per series, the value printed on each bar ("n/a" when
    there is none); the y axis runs from 0 to 1.1 * ymax (to the largest value or interval
    end when ymax is None). `intervals` (keyed and ordered as `series`, in its units) adds
    an error bar to each bar that has a value and an interval; the value then sits above
    the whisker, and a key under the chart says what the bars mean."""
    chart = Chart(title)
    names = list(series)
    values = {n: [None if v is None or math.isnan(v) else float(v) for v in series[n]]
              for n in names}
    spans = {n: [_interval(found) if value is not None else None
                 for value, found in zip(values[n], (intervals or {}).get(n)
                                         or [None] * len(values[n]), strict=True)]
             for n in names}
    known = [v for vs in values.values() for v in vs if v is not None]
    known += [span[1] for ss in spans.values() for span in ss if span is not None]
    top = (ymax if ymax is not None else max([*known, 0.0]) or 1.0) * 1.1
    slot = max(16.0, max((text_width(_value_text(v, ymax), SMALL) for n in names
                          for v in values[n]), default=0) + 3)
    group = max(len(names), 1) * slot + 14
    label_room = max((text_width(c) for c in categories), default=0)
    group = max(group, min(label_room + 10, 90.0))  # room for a label; longer ones rotate
    rotated = label_room > group - 4
    group = max(group, 120.0 / max(len(categories), 1))  # a few bars: spread, not squeezed
    tick_labels = [_tick_label(t) for t in ticks(top)]
    left = 22 + max(text_width(t) for t in tick_labels) + 8
    if rotated:  # a rotated label reaches left of its bar: keep every one in the picture
        left = max(left, _rotated_reach(categories, group) + 4)
    plot_top, plot_h = 34.0, 170.0
    plot_w = group * len(categories)
    axis_y = plot_top + plot_h
    chart.text(4, 16, title, anchor="start", size=TITLE)
    scale = plot_h / top
    for t, label in zip(ticks(top), tick_labels, strict=True):
        y = axis_y - t * scale
        chart.line(left - 4, y, left, y)
        chart.text(left - 6, y, label, anchor="end", baseline="central")
    ylabel_x = max(11, left - 14 - max(text_width(t) for t in tick_labels))
    chart.text(ylabel_x, plot_top + plot_h / 2, ylabel, baseline="central", rotate=-90)
    for c, category in enumerate(categories):
        start = left + c * group + (group - len(names) * slot) / 2  # bars centred
        for i, name in enumerate(names):
            value = values[name][c]
            height = min(max(value or 0.0, 0.0), top) * scale
            x = start + i * slot
            tip = f"{name}, {category}: {_value_text(value, ymax)}"
            label_y = axis_y - height
            span = spans[name][c]
            if span is not None:
                low, high = (axis_y - min(max(end, 0.0), top) * scale for end in span)
                chart.whisker(x + slot / 2, low, x + slot / 2, high, min(6.0, slot - 6))
                label_y = min(label_y, high)
                tip += f" ({_interval_text(span, ymax)})"
            chart.rect(x + 1, axis_y - height, slot - 2, height, PALETTE[i % len(PALETTE)],
                       tip)
            chart.text(x + slot / 2, label_y - 2, _value_text(value, ymax), size=SMALL)
        middle = left + (c + 0.5) * group
        chart.line(middle, axis_y, middle, axis_y + 4)
        if rotated:
            chart.text(middle + 3, axis_y + 10, category, anchor="end", rotate=-30)
        else:
            chart.text(middle, axis_y + 15, category)
    chart.line(left, plot_top, left, axis_y)
    chart.line(left, axis_y, left + plot_w, axis_y)
    bottom = axis_y + (label_room * 0.5 + 16 if rotated else 22)
    chart.width = max(left + plot_w + 10, text_width(title, TITLE) + 12)
    if len(names) > 1:
        bottom = _legend(chart, names, left, bottom + 4, min(4, len(names)))
    if any(span is not None for ss in spans.values() for span in ss):
        bottom = _interval_key(chart, left, bottom + 2)
    chart.height = bottom + 6
    return chart.render()


def _rotated_reach(labels: Sequence[str], step: float) -> float:
    """How far left of the first slot's edge labels rotated by 30 degrees reach, each
    ending under the middle of its slot (`step` wide)."""
    return max((0.87 * text_width(label) - (i + 0.5) * step
                for i, label in enumerate(labels)), default=0.0)


def stacked_bars(categories: Sequence[str], parts: Mapping[str, Sequence[float]], title: str,
                 xlabel: str = "percent", colours: Sequence[str] = PALETTE) -> str:
    """Horizontal 100% bars: one row per category, one colour per part (`colours`, in the
    parts' order: a part that means a miss gets `MISS`), the share printed in white where
    it is 7 or more."""
    chart = Chart(title)
    names = list(parts)
    left = max((text_width(c) for c in categories), default=0) + 14
    plot_w, row, plot_top = 380.0, 26.0, 30.0
    chart.text(4, 16, title, anchor="start", size=TITLE)
    for c, category in enumerate(categories):
        y = plot_top + c * row
        chart.text(left - 8, y + row / 2, category, anchor="end", baseline="central")
        chart.line(left - 4, y + row / 2, left, y + row / 2)
        offset = 0.0
        for i, name in enumerate(names):
            value = float(parts[name][c])
            x, width = left + offset / 100 * plot_w, max(value, 0.0) / 100 * plot_w
            chart.rect(x, y + 3, width, row - 6, colours[i % len(colours)],
                       f"{category}, {name}: {value:.1f}")
            if value >= 7:
                chart.text(x + width / 2, y + row / 2, f"{value:.0f}", baseline="central",
                           size=SMALL, fill="#fff")
            offset += max(value, 0.0)
    axis_y = plot_top + len(categories) * row
    chart.line(left, plot_top, left, axis_y)
    chart.line(left, axis_y, left + plot_w, axis_y)
    for t in range(0, 101, 20):
        x = left + t / 100 * plot_w
        chart.line(x, axis_y, x, axis_y + 4)
        chart.text(x, axis_y + 14, str(t))
    chart.text(left + plot_w / 2, axis_y + 30, xlabel)
    chart.width = max(left + plot_w + 14, text_width(title, TITLE) + 12)
    per_row = max(1, min(len(names), int((chart.width - 8) // max(
        (28 + text_width(n, 8) for n in names), default=1))))
    chart.height = _legend(chart, names, left, axis_y + 38, per_row, colours) + 6
    return chart.render()


def share_colours(parts: Sequence[Share]) -> tuple[str, ...]:
    """The colours of 100% bars' parts: a part that means a miss is grey (`MISS`); the
    others are answers, neither right nor wrong by themselves, so they take neutral hues,
    every second one of the palette so neighbours stand apart."""
    answers = itertools.cycle(PALETTE[::2] + PALETTE[1::2])
    return tuple(MISS if part.miss else next(answers) for part in parts)


def blue(share: float) -> str:
    """The colour of a share in [0, 1] on the ColorBrewer Blues scale (interpolated)."""
    share = min(max(share, 0.0), 1.0) * (len(BLUES) - 1)
    low = min(int(share), len(BLUES) - 2)
    a, b = BLUES[low], BLUES[low + 1]
    mix = share - low
    channels = (round(int(a[k:k + 2], 16) * (1 - mix) + int(b[k:k + 2], 16) * mix)
                for k in (1, 3, 5))
    return "#" + "".join(f"{v:02x}" for v in channels)


def heatmap(rows: Sequence[str], columns: Sequence[str], counts: Sequence[Sequence[int]],
            title: str, xlabel: str, ylabel: str) -> str:
    """A count matrix with the counts written in the cells (a confusion view): darker is
    more, white text on the darker half."""
    chart = Chart(title)
    cell_w = max(34.0, max((text_width(str(v), 8) for r in counts for v in r), default=0) + 8)
    cell_h = 24.0
    left = 22 + max((text_width(r) for r in rows), default=0) + 10
    label_room = max((text_width(c) for c in columns), default=0)
    left = max(left, _rotated_reach(columns, cell_w) + 4)  # rotated column labels
    plot_top = 30.0
    peak = max((max(r) for r in counts if r), default=0) or 1
    chart.text(4, 16, title, anchor="start", size=TITLE)
    for i, (name, row) in enumerate(zip(rows, counts, strict=True)):
        y = plot_top + i * cell_h
        chart.text(left - 6, y + cell_h / 2, name, anchor="end", baseline="central")
        for j, value in enumerate(row):
            x = left + j * cell_w
            chart.rect(x, y, cell_w, cell_h, blue(value / peak),
                       f"{ylabel} {name}, {xlabel} {columns[j]}: {value}")
            chart.text(x + cell_w / 2, y + cell_h / 2, str(value), baseline="central",
                       size=8, fill="#fff" if value > peak / 2 else "#000")
    bottom = plot_top + len(rows) * cell_h
    ylabel_x = max(11, left - 16 - max((text_width(r) for r in rows), default=0))
    chart.text(ylabel_x, plot_top + len(rows) * cell_h / 2, ylabel, baseline="central",
               rotate=-90)
    for j, column in enumerate(columns):
        x = left + (j + 0.5) * cell_w
        chart.text(x + 3, bottom + 10, column, anchor="end", rotate=-30)
    label_bottom = bottom + 10 + label_room * 0.5 + 6
    chart.text(left + len(columns) * cell_w / 2, label_bottom + 10, xlabel)
    chart.width = max(left + len(columns) * cell_w + 12, text_width(title, TITLE) + 12)
    chart.height = label_bottom + 18
    return chart.render()


def wrap_label(label: str, width: int = 38) -> list[str]:
    """At most two lines of `width` characters; a longer label ends in an ellipsis."""
    lines = textwrap.wrap(label, width, break_on_hyphens=False) or [""]
    if len(lines) > 2:
        lines = [lines[0], lines[1][:width - 1] + "…"]
    return lines


def evaluator_bars(labels: Sequence[str], rates: Sequence[float | None], title: str,
                   intervals: Sequence[Interval | None] | None = None) -> str:
    """The pass rate per evaluator, one horizontal bar a row: labels such as
    `script:uv run check.py` are long, and rows never overlap where rotated x labels did.
    Long labels wrap (two lines, then an ellipsis); a rate that could not be computed says
    "n/a (no result)". `intervals` (percent, one per rate) adds an error bar to each rate
    that has one; the value is printed right of its whisker."""
    chart = Chart(title)
    found = intervals if intervals is not None else [None] * len(rates)
    spans = [_interval(i) if r is not None and not math.isnan(r) else None
             for r, i in zip(rates, found, strict=True)]
    wrapped = [wrap_label(label) for label in labels]
    size = 8
    left = max((text_width(line, size) for lines in wrapped for line in lines), default=0) + 14
    plot_w, plot_top = 360.0, 30.0
    scale = plot_w / 110
    chart.text(4, 16, title, anchor="start", size=TITLE)
    y = plot_top
    for lines, rate, span in zip(wrapped, rates, spans, strict=True):
        row = 10.0 * len(lines) + 14
        middle = y + row / 2
        chart.text(left - 8, middle, lines, anchor="end", baseline="central", size=size)
        chart.line(left - 4, middle, left, middle)
        known = rate is not None and not math.isnan(rate)
        width = min(max(rate or 0.0, 0.0), 110.0) * scale if known else 0.0
        shown = f"{rate:.1f}" if known else "n/a (no result)"
        tip, label_x = f"{' '.join(lines)}: {shown}", left + width
        if span is not None:
            low, high = (left + min(max(end, 0.0), 110.0) * scale for end in span)
            chart.whisker(low, middle, high, middle, 8)
            tip += f" ({_interval_text(span, 100)})"
            label_x = max(label_x, high)
        chart.rect(left, middle - 7, width, 14, PALETTE[0], tip)
        chart.text(label_x + 3, middle, shown, anchor="start", baseline="central", size=SMALL)
        y += row
    chart.line(left, plot_top, left, y)
    chart.line(left, y, left + plot_w, y)
    for t in range(0, 101, 20):
        x = left + t * scale
        chart.line(x, y, x, y + 4)
        chart.text(x, y + 14, str(t))
    chart.text(left + plot_w / 2, y + 30, "percent")
    chart.width = max(left + plot_w + 14, text_width(title, TITLE) + 12)
    bottom = y + 32
    if any(span is not None for span in spans):
        bottom = _interval_key(chart, left, bottom + 4, horizontal=True)
    chart.height = bottom + 6
    return chart.render()


@dataclass(frozen=True)
class Frame:
    """The plotting area of a line chart, in points: where its axes are."""

    left: float = 46.0
    top: float = 30.0
    width: float = 260.0
    height: float = 160.0

    @property
    def bottom(self) -> float:
        return self.top + self.height


def axes(chart: Chart, frame: Frame, y_ticks: Sequence[tuple[float, str]],
         x_ticks: Sequence[tuple[float, str]], y_label: str, x_label: str) -> None:
    """A line chart's title, both axes with their ticks (positions in points) and labels."""
    left, bottom = frame.left, frame.bottom
    chart.text(4, 16, chart.title, anchor="start", size=TITLE)
    for y, label in y_ticks:
        chart.line(left - 4, y, left, y)
        chart.text(left - 6, y, label, anchor="end", baseline="central")
    for x, label in x_ticks:
        chart.line(x, bottom, x, bottom + 4)
        chart.text(x, bottom + 14, label)
    chart.line(left, frame.top, left, bottom)
    chart.line(left, bottom, left + frame.width, bottom)
    chart.text(12, frame.top + frame.height / 2, y_label, baseline="central", rotate=-90)
    chart.text(left + frame.width / 2, bottom + 28, x_label)
