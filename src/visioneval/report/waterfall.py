"""The waterfall chart: from one number to another, one horizontal bar a step, so long step
names read without rotation. Totals are drawn from the axis, steps float from the running
value before them to the one after; gains and losses have their own colours (a gap is not a
verdict, so neither is green or red). The axis is zoomed to the values shown, and says where
it starts when that is not 0."""

from __future__ import annotations

import math

from visioneval.core.figures import Waterfall
from visioneval.report.charts import (
    PALETTE,
    TITLE,
    Chart,
    _interval_key,
    text_width,
    wrap_label,
)

TOTAL, GAIN, LOSS = PALETTE[6], PALETTE[0], PALETTE[1]
PLOT_WIDTH = 380.0
ROW = 22.0


def waterfall(figure: Waterfall) -> str:
    chart = Chart(figure.title)
    low, high = _range(figure)
    scale = PLOT_WIDTH / (high - low)
    wrapped = [wrap_label(step.label, 44) for step in figure.steps]
    size = 8
    left = max((text_width(line, size) for lines in wrapped for line in lines),
               default=0) + 14
    top = 30.0
    chart.text(4, 16, figure.title, anchor="start", size=TITLE)

    def x_of(value: float) -> float:
        return left + (min(max(value, low), high) - low) * scale

    y = top
    for step, lines in zip(figure.steps, wrapped, strict=True):
        row = max(ROW, 10.0 * len(lines) + 10)
        middle = y + row / 2
        chart.text(left - 8, middle, lines, anchor="end", baseline="central", size=size)
        start, end = (low, step.after) if step.total else (step.before, step.after)
        fill = TOTAL if step.total else (GAIN if step.after >= step.before else LOSS)
        shown = f"{step.after:.1f}" if step.total else f"{step.after - step.before:+.1f}"
        x1, x2 = sorted((x_of(start), x_of(end)))
        tip = f"{' '.join(lines)}: {shown}"
        label_x = x2
        if step.interval is not None:
            base = 0.0 if step.total else step.before
            w1, w2 = x_of(base + step.interval[0]), x_of(base + step.interval[1])
            chart.whisker(w1, middle, w2, middle, 8)
            tip += f" (95% interval {step.interval[0]:+.1f} to {step.interval[1]:+.1f})" \
                if not step.total else \
                f" (95% interval {step.interval[0]:.1f} to {step.interval[1]:.1f})"
            label_x = max(label_x, w2)
        chart.rect(x1, middle - 6, max(x2 - x1, 1.0), 12, fill, tip)
        chart.text(label_x + 3, middle, shown, anchor="start", baseline="central", size=7)
        if not step.total:  # the connector from the running value before this step
            chart.line(x_of(step.before), y - 2, x_of(step.before), y + 2)
        y += row
    chart.line(left, top, left, y)
    chart.line(left, y, left + PLOT_WIDTH, y)
    for value in _ticks(low, high):
        x = x_of(value)
        chart.line(x, y, x, y + 4)
        chart.text(x, y + 14, f"{value:g}")
    axis = figure.xlabel if low == 0 else f"{figure.xlabel} (the axis starts at {low:g})"
    chart.text(left + PLOT_WIDTH / 2, y + 30, axis)
    chart.width = max(left + PLOT_WIDTH + 40, text_width(figure.title, TITLE) + 12)
    bottom = _interval_key(chart, left, y + 36, horizontal=True)
    chart.height = bottom + 6
    return chart.render()


def _range(figure: Waterfall) -> tuple[float, float]:
    """The axis: every running value and interval end, with a margin, in steps of 5."""
    values = [0.0 if s.total else s.before for s in figure.steps]
    values += [s.after for s in figure.steps]
    for s in figure.steps:
        if s.interval is not None:
            base = 0.0 if s.total else s.before
            values += [base + s.interval[0], base + s.interval[1]]
    shown = [v for v in values[len(figure.steps):] if math.isfinite(v)] or [0.0, 100.0]
    everything = [v for v in values if math.isfinite(v)] or shown
    low = max(0.0, 5 * math.floor((min(shown) - 3) / 5))
    high = min(100.0, 5 * math.ceil((max(everything) + 2) / 5))
    if high - low < 10:
        high = low + 10
    return low, high


def _ticks(low: float, high: float) -> list[float]:
    span = high - low
    step = next(s for s in (1, 2, 5, 10, 20, 25) if span / s <= 8)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) // step) + 1)]
