"""What a contrast run shows beyond every paradigm's tables: the contrast sensitivity
function as a chart (each frequency's sensitivity and the fitted log-parabola, log-log),
and a line for each threshold below what an undithered 8-bit image can draw."""

from __future__ import annotations

import math
from typing import Any

from visioneval.benchmarks.contrast.csf import LogParabola
from visioneval.benchmarks.contrast.paradigm import PEAK, STEP, cycles_of
from visioneval.core.blocks import Charts, Note, Section
from visioneval.core.figures import Axis, LinePoint, Lines, NamedLine, Tick
from visioneval.paradigms import tables


def measured(metrics: dict[str, Any]) -> list[tuple[float, float, dict[str, Any]]]:
    """(cycles per image, sensitivity, curve) of each frequency that reached a threshold."""
    out = []
    for c in metrics.get("curves", []):
        cycles = cycles_of(c["condition"])
        if cycles is not None and c.get("threshold"):
            out.append((cycles, 100 / c["threshold"], c))
    return out


def fitted(metrics: dict[str, Any]) -> LogParabola | None:
    found = {s["name"]: s.get("value") for s in metrics.get("summaries", [])}
    values = [found.get(name) for name in PEAK]
    if any(v is None for v in values):
        return None
    sensitivity, frequency, bandwidth = (float(v) for v in values if v is not None)
    return LogParabola(sensitivity, frequency, bandwidth)


def csf_section(metrics: dict[str, Any]) -> Section | None:
    points = measured(metrics)
    if not points:
        return None
    curve = fitted(metrics)
    frequencies = [cycles_of(c["condition"]) for c in metrics["curves"]]
    tested = [f for f in frequencies if f is not None] or [p[0] for p in points]
    x = Axis("cycles per image width (log)", min(tested) / 1.4,
             max(tested) * 1.4, [Tick(f, f"{f:g}") for f in tested], "log10")
    lines = [NamedLine("1/threshold, 95% interval", [
        LinePoint(f, s, f"{f:g} cycles/image: sensitivity {s:.3g} (threshold "
                        f"{c['threshold']:.3g}%, 95% interval "
                        f"{tables.span(c.get('threshold_ci95'))}%)", _turned(c))
        for f, s, c in points])]
    values = [s for _, s, _ in points] + [end for _, _, c in points
                                          for end in (_turned(c) or ()) if end is not None]
    if curve is not None:
        first, last = min(tested), max(tested)
        along = [first * (last / first) ** (i / 40) for i in range(41)]
        lines.append(NamedLine("fitted CSF (log-parabola)", [
            LinePoint(f, curve.sensitivity(f), "") for f in along], markers=False))
        values += [curve.sensitivity(f) for f in along]
    low, high = min(values) / 1.5, max(values) * 1.5
    y = Axis("sensitivity (log)", low, high, _ticks(low, high), "log10")
    note = ("Each frequency's sensitivity (1 / its 75%-correct threshold) with its 95% "
            "interval (an open end runs to the edge), and the log-parabola fitted through "
            "them (the summaries below: peak sensitivity, peak frequency, bandwidth). "
            f"Above the grey line, {1 / STEP:.3g}, a threshold is under {100 * STEP:.3g}%, "
            "one 8-bit step at mid-grey: below the display's resolution, seen only through "
            "dithering.")
    return Section("The contrast sensitivity function", [
        Charts([Lines("Contrast sensitivity against spatial frequency", x, y, lines,
                      chance=1 / STEP if low < 1 / STEP < high else None)]),
        Note(note)])


def _turned(curve: dict[str, Any]) -> tuple[float | None, float | None] | None:
    """A threshold's interval as one of sensitivity: 100 / each end, turned over."""
    band = curve.get("threshold_ci95")
    if not band:
        return None
    low, high = band
    return (None if high is None else 100 / high, None if low is None else 100 / low)


def resolution_lines(metrics: dict[str, Any]) -> list[str]:
    """One line per threshold below one 8-bit step at the background."""
    return [f"{c['condition']}: threshold {c['threshold']:.3g}% is below the display's "
            f"resolution (one 8-bit step at mid-grey is {100 * STEP:.3g}%); dithering shows "
            "it on average." for c in metrics.get("curves", [])
            if c.get("threshold") is not None and c["threshold"] / 100 < STEP]


def _ticks(low: float, high: float) -> list[Tick]:
    out = []
    for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        for mantissa in (1, 2, 5):
            value = mantissa * 10.0 ** exponent
            if low <= value <= high:
                out.append(Tick(value, f"{value:g}"))
    return out
