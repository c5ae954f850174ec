"""The report's sections for a paradigm's run and `compare`'s table and overlays: each
curve's points with their Wilson intervals, the fitted function and its threshold or PSE
with the interval as a band (an estimate: its error per level and its median answer
against the truth); the paradigm's summaries; the published human values beside them. The
charts are data (`core.figures`); the page draws them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from visioneval.core.blocks import Charts, ComparisonTable, Items, Note, Section, Table
from visioneval.core.figures import (
    Axis,
    LevelPoint,
    LinePoint,
    Lines,
    NamedLine,
    PointGroup,
    Psychometric,
    PsychometricSeries,
    Scatter,
    SigmoidFit,
    Tick,
)
from visioneval.core.marks import Interval
from visioneval.core.view import ReadableRun
from visioneval.paradigms import tables
from visioneval.paradigms.difference import differences, estimate_differences
from visioneval.stats.psychometric_fit import RESAMPLES


@dataclass(frozen=True)
class Series:
    curve: dict[str, Any]
    name: str = ""


def sections(metrics: dict[str, Any]) -> list[Section]:
    if not metrics.get("curves"):
        return []
    header, rows = tables.curve_rows(metrics)
    comparison = metrics["kind"] == "comparison"
    fitted = [c for c in metrics["curves"] if not is_control(c)]
    if metrics["kind"] == "estimate":
        blocks: list[Any] = [Table(header, rows, numeric_from=1),
                             Charts(estimate_charts(metrics)), Note(
            tables.fit_note(metrics) + " Charts: each condition's midmean error at each "
            "true value, and its median answer against the true value (on the grey line "
            "the median is right).")]
    else:
        charts = ([chart([Series(c, c["condition"]) for c in shared], metrics, title)
                   for title, shared in _charted(fitted, metrics["title"]).items()]
                  if comparison and len(fitted) > 1 else
                  [chart([Series(c)], metrics, c["condition"]) for c in fitted])
        blocks = [Table(header, rows, numeric_from=1), *([Charts(charts)] if charts else []),
                  Note(tables.fit_note(metrics) + " Points: the share of answers with "
                       "Wilson 95% intervals.")]
    listed = tables.other_units(metrics) + tables.reasons(metrics)
    if listed:
        blocks.append(Items(listed))
    heading = "the conditions" if metrics["kind"] == "estimate" else "the curves"
    out = [Section(f"{metrics['title']}: {heading}", blocks)]
    summaries = tables.summary_rows(metrics)
    if summaries:
        out.append(Section("From the curves together", [
            Table(tables.SUMMARY_HEADER, summaries, numeric_from=1),
            *([Items([f"{s['name']}: {s['note']}" for s in metrics["summaries"]
                      if s.get("note")])] if any(s.get("note") for s in
                                                 metrics["summaries"]) else [])]))
    if metrics.get("human"):
        out.append(Section("People, as published", [
            Table(tables.HUMAN_HEADER, tables.human_rows(metrics), numeric_from=4),
            Items([f"{h['quantity']}: {h['comparable']}" for h in metrics["human"]])]))
    return out


def is_control(curve: dict[str, Any]) -> bool:
    """A control condition's curve: its points, no fit, in no chart or comparison."""
    return curve.get("status") == "control"


def _charted(curves: list[dict[str, Any]], title: str) -> dict[str, list[dict[str, Any]]]:
    """A comparison's curves by the chart they are drawn on, in order (one chart, the
    paradigm's title, for curves that name none)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for c in curves:
        out.setdefault(c.get("chart") or title, []).append(c)
    return out
def estimate_charts(metrics: dict[str, Any]) -> list[Lines | Scatter]:
    """An estimate's error against the true value, a line per condition, and its median
    answer against the true value."""
    curves = metrics["curves"]
    levels = [j["level"] for c in curves for j in c.get("judged", [])] or [0.0, 1.0]
    low, high = min(levels), max(levels)
    pad = 0.05 * (high - low or 1.0)
    unit = metrics["unit"]
    x = Axis(f"true value ({unit})", low - pad, high + pad, _linear_ticks(low, high))
    errors = [j["error"] for c in curves for j in c.get("judged", [])
              if j.get("error") is not None] or [-3.0, 0.0]
    bottom, top = min(-3.0, min(errors)), max(max(errors) + 0.5, 1.0)  # -3: exact
    y = Axis("midmean log2 error", bottom, top, _linear_ticks(bottom, top))
    lines = [NamedLine(c["condition"], [
        LinePoint(j["level"], j["error"], f"{c['condition']}, true {j['level']:g}: "
                  f"log2 error {j['error']:.2f} over {j['n']} answers")
        for j in c.get("judged", []) if j.get("error") is not None]) for c in curves]
    judged = [PointGroup(c["condition"], [(j["level"], j["median"])
                                          for j in c.get("judged", [])
                                          if j.get("median") is not None]) for c in curves]
    answers = [m for g in judged for _, m in g.points] + [low, high]
    span = (min(low, *answers), max(high, *answers))
    square = Axis(f"true value ({unit})", span[0], span[1], _linear_ticks(*span))
    return [Lines("Error by true value", x, y, lines),
            Scatter("Median answer by true value", square,
                    Axis(f"median answer ({unit})", span[0], span[1], _linear_ticks(*span)),
                    judged)]


def chart(series: Sequence[Series], metrics: dict[str, Any], title: str) -> Psychometric:
    """The curves of `series` on one chart: a log axis for a forced choice's magnitudes, a
    linear one for a comparison's signed levels."""
    comparison = metrics["kind"] == "comparison"
    levels = [p["level"] for s in series for p in s.curve["points"]] or [1.0]
    unit = series[0].curve.get("unit") or metrics["unit"]
    if comparison:
        low, high = min(levels), max(levels)
        pad = 0.08 * (high - low or 1.0)
        axis = Axis(f"level ({unit})", low - pad, high + pad, _linear_ticks(low, high),
                    "linear")
    else:
        positive = [v for v in levels if v > 0] or [1.0]
        low, high = min(positive) / 1.5, max(positive) * 1.5
        axis = Axis(f"level ({unit}, log scale)", low, high, _log_ticks(low, high), "log10")
    guess = None if comparison else series[0].curve.get("guess")
    return Psychometric(title, axis, unit, guess, [_series(s, comparison) for s in series],
                        y_label=f"proportion {metrics.get('counted', 'correct')}",
                        marked="PSE" if comparison else "threshold")


def _series(s: Series, comparison: bool) -> PsychometricSeries:
    c = s.curve
    figure, band_key = ("pse", "pse_ci95") if comparison else ("threshold", "threshold_ci95")
    band = c.get(band_key)
    fit = None
    if comparison and c.get("sigma") is not None and c.get("pse") is not None:
        fit = SigmoidFit(c["pse"], c["sigma"], c.get("lapse") or 0.0, c.get("lapse") or 0.0,
                         "gaussian")
    elif not comparison and c.get("alpha") is not None:
        fit = SigmoidFit(c["alpha"], c.get("beta") or 0.0, c["guess"], c.get("lapse") or 0.0,
                         c.get("form") or "weibull")
    points = [LevelPoint(p["level"], p["p"], (p["ci95"][0], p["ci95"][1]), p["k"], p["n"])
              for p in c["points"]]
    value = c.get(figure)
    reading = (f"{figure.upper() if comparison else figure} {tables.number(value)} "
               f"{c['unit']}" + (f" ({tables.span(band)})" if band else "")
               if value is not None else c["status"])
    own = c.get("own_figure")
    if own and own.get("value") is not None:
        reading = (f"{own['name']} {tables.with_unit(own['value'], own['unit'])} "
                   f"({tables.spread(own.get('ci95'))}); {reading}")
    return PsychometricSeries(points, fit, c.get("criterion") or 0.5, value,
                              (band[0], band[1]) if band else None,
                              tables.span(band) if band else "", reading, s.name)


def _linear_ticks(low: float, high: float) -> list[Tick]:
    step = 10 ** math.floor(math.log10((high - low) / 2 or 1.0))
    for factor in (1, 2, 5, 10):
        if (high - low) / (step * factor) <= 6:
            step *= factor
            break
    first = math.ceil(low / step) * step
    count = int(math.floor((high - first) / step + 1e-9)) + 1
    return [Tick(first + i * step, f"{first + i * step:g}") for i in range(count)]


def _log_ticks(low: float, high: float) -> list[Tick]:
    """1, 2, 5 a decade; finer (1, 1.5, 2, 3, 4, 5, 7) where that leaves fewer than four
    ticks (levels within a decade: ratios from 1.08 to 3)."""
    for mantissas in ((1, 2, 5), (1, 1.5, 2, 3, 4, 5, 7)):
        out = []
        for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
            for mantissa in mantissas:
                value = mantissa * 10.0 ** exponent
                if low <= value <= high:
                    out.append(Tick(value, f"{value:g}"))
        if len(out) >= 4:
            break
    return out


def run_label(view: ReadableRun) -> str:
    return f"{view.model} ({view.directory.name})"


def comparison(benchmark: str, views: Sequence[ReadableRun]) -> ComparisonTable | None:
    """One row per run: the paradigm's summaries (an illusion's strength), then each
    condition's threshold (or PSE and JND), each with its interval, and the runs' curves
    overlaid per condition that two or more fitted."""
    if not views or not all("curves" in v.metrics for v in views):
        return None
    kind = views[0].metrics["kind"]
    own = tables.own_figure(views[0].metrics)
    figures = (["pse", "jnd"] if kind == "comparison" else ["error"] if kind == "estimate"
               else [own["name"]] if own else ["threshold"])
    conditions = list(dict.fromkeys(c["condition"] for v in views
                                    for c in v.metrics["curves"] if not is_control(c)))
    summaries = {s["name"]: s["unit"] for v in views for s in v.metrics.get("summaries", [])}
    unit = own["unit"] if own else views[0].metrics["unit"]
    header = ["Model", "Run", *[f"{name} ({u})" if u else name for name, u in summaries.items()],
              *[c if f == "error" else f"{c} {_figure_name(f)}" + (f" ({unit})" if unit else "")
                for c in conditions for f in figures]]
    rows, intervals = [], []
    for view in views:
        found = {c["condition"]: c for c in view.metrics["curves"]}
        made = {s["name"]: s for s in view.metrics.get("summaries", [])}
        row = [view.model, view.directory.name]
        spans: list[Interval | None] = [None, None]
        cells = [(made.get(name, {}), "value", "ci95") for name in summaries] + [
            (found.get(condition, {}), figure, f"{figure}_ci95")
            for condition in conditions for figure in figures]
        for c, figure, band_key in cells:
            if own and figure == own["name"] and c.get("own_figure"):
                c, figure, band_key = c["own_figure"], "value", "ci95"
            value = c.get(figure)
            missing = "not computed" if figure == "value" else c.get("status", "not reached")
            row.append(missing if c and value is None else
                       ("" if value is None else f"{value:.3g}"))
            band = c.get(band_key)
            spans.append(None if value is None or not band else (
                -math.inf if band[0] is None else band[0],
                math.inf if band[1] is None else band[1]))
        rows.append(row)
        intervals.append(spans)
    return ComparisonTable(benchmark, header, rows, [False] * (len(header) - 2),
                           runs=list(views), intervals=intervals,
                           units=("Each condition's midmean log2 error (lower: more "
                                  "accurate)." if kind == "estimate" else
                                  f"Figures in {unit} unless a column says otherwise."
                                  if unit else "Figures without a unit unless a column says."),
                           notes=[tables.fit_note(views[0].metrics)],
                           sections=_overlays(views))


def _figure_name(figure: str) -> str:
    return figure.upper() if figure in ("pse", "jnd") else figure


def _overlays(views: Sequence[ReadableRun]) -> list[Section]:
    if len(views) < 2:
        return []
    if views[0].metrics["kind"] == "estimate":
        return difference_section(views)
    per: dict[str, list[Series]] = {}
    for view in views:
        for c in view.metrics["curves"]:
            if not is_control(c):
                per.setdefault(c["condition"], []).append(Series(c, run_label(view)))
    shared = {name: found for name, found in per.items() if len(found) > 1}
    if not shared:
        return []
    charts = [chart(found, views[0].metrics, name) for name, found in shared.items()]
    return [Section("Curves, run against run", [
        Charts(charts),
        Note("Per condition that two or more runs fitted: each run's share of answers per "
             "level (Wilson 95% intervals), its fitted curve in the same colour and its "
             "threshold or PSE with its 95% interval as a bar.")]), *difference_section(views)]


def difference_section(views: Sequence[ReadableRun]) -> list[Section]:
    """Each run after the first against the first, per condition and figure both have."""
    estimate = views[0].metrics["kind"] == "estimate"
    found = estimate_differences([(run_label(v), v.directory) for v in views]) if estimate \
        else differences([(run_label(v), v.metrics) for v in views])
    if not found:
        return []
    rows, why = [], []
    for d in found:
        if d.reason or d.found is None:
            why.append(f"{d.other}, {d.condition}: {d.reason}")
            continue
        test = d.found
        ratio = (f"×{d.other_value / d.first_value:.3g} "
                 f"({interval_text(test.ratio_ci95)})" if test.ratio_ci95 is not None and
                 d.first_value and d.other_value and d.figure not in ("PSE", "log2 error")
                 else "-")
        rows.append([d.other, d.condition, d.figure, tables.number(d.first_value),
                     tables.number(d.other_value),
                     f"{(d.other_value or 0) - (d.first_value or 0):+.3g} "
                     f"({interval_text(test.difference_ci95)})", ratio,
                     f"{test.p_value:.3g}" + ("*" if test.p_value < 0.05 else "")])
    blocks: list[Any] = []
    if rows:
        blocks += [Table(["run", "condition", "figure", "first", "this",
                          "this − first (95%)", "this / first (95%)", "p"], rows,
                         numeric_from=3),
                   Note(f"Each run against the first, {run_label(views[0])}: " + (
                        f"each run's answers resampled on their own ({RESAMPLES} bootstrap "
                        "resamples of its trials, independent random numbers per run), the "
                        "i-th midmean of one paired with the i-th of the other; a ratio of "
                        "log errors means nothing, so there is none" if estimate else
                        "each run's counts refitted and resampled on their own (parametric "
                        f"bootstrap, {RESAMPLES} refits, independent random numbers per run), "
                        "the i-th refit of one paired with the i-th of the other") +
                        "; interval: the 2.5th and 97.5th percentiles of the paired "
                        f"differences{'' if estimate else ' and ratios'}; p: two-sided (*: "
                        "below 0.05), no correction for the number of tests.")]
    if why:
        blocks.append(Items(why))
    return [Section("Differences (bootstrap of the trials)" if estimate else
                    "Differences (parametric bootstrap)", blocks)]


def interval_text(span: tuple[float, float] | None) -> str:
    """"low to high"; an infinite end reads "unbounded"."""
    if span is None:
        return "-"
    return " to ".join("unbounded" if math.isinf(v) else f"{v:.3g}" for v in span)
