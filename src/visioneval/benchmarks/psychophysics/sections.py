"""The report's psychophysics sections: per feature the psychometric function (proportion
correct per level with binomial 95% intervals on a log axis, the fitted ψ, the threshold
with its interval band, the guess rate dashed), the thresholds table, the d′ table, the
set-size effect, feature against conjunction search; and `compare`'s thresholds table.
Charts are drawn with `report.charts`' shapes (no matplotlib)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from visioneval.benchmarks.psychophysics import tables
from visioneval.core.blocks import Charts, ComparisonTable, Items, Note, Section, Table
from visioneval.core.marks import Interval
from visioneval.core.view import RunData

CURVE, POINT, BAND, THRESHOLD = "#4c72b0", "#111", "#dd8452", "#dd8452"
BAND_FILL = "#f6dcc8"


def sections(metrics: dict[str, Any]) -> list[Section]:
    out = []
    thresholds = metrics.get("thresholds", [])
    if thresholds:
        charts = [psychometric_chart([Series(t, _points_of(metrics, t))]) for t in thresholds]
        missing = [m for m in metrics.get("missing_levels", [])]
        blocks: list[Any] = [
            Table(tables.THRESHOLD_HEADER, tables.threshold_rows(metrics), numeric_from=2),
            Charts(charts),
            Note(f"Threshold: the level where the fitted ψ(x) = γ + (1 − γ − λ)·F(x) reaches "
                 f"{metrics['criterion']:g} correct (γ = 1/3, λ fitted within [0, 0.1], F "
                 f"{metrics['form']}); 95% interval: parametric bootstrap. Slope at threshold: "
                 "dψ/dx there (proportion correct per unit of the level); beta: the fitted "
                 f"{metrics['form']}'s β. \"not reached\": no threshold within the tested "
                 "levels, never an extrapolation. Points: proportion correct with Wilson 95% "
                 "intervals.")]
        reasons = tables.threshold_reasons(metrics)
        if reasons:
            blocks.append(Items([f"not reached: {r}" for r in reasons]))
        if missing:
            blocks.append(Note("Levels with no answered trial (in no figure): " + "; ".join(
                f"{m['experiment']} {m['feature']} {m['level']:g} (set size "
                f"{m['set_size']}): {m['reason']}" for m in missing)))
        out.append(Section("Thresholds (detection: which feature differs)", blocks))
    elif metrics.get("thresholds_unavailable"):
        out.append(Section("Thresholds", [Note(f"Not available: "
                                               f"{metrics['thresholds_unavailable']}.")]))
    rows = tables.dprime_rows(metrics)
    if rows:
        out.append(Section("Yes/no: d′ and criterion c", [
            Table(tables.DPRIME_HEADER, rows, numeric_from=3),
            Note("d′ = z(H) − z(F), c = −(z(H) + z(F))/2, hit and false-alarm rates "
                 "log-linear corrected (0.5 added to each count, 1 to each number of "
                 "trials); 95% intervals from the large-sample variance. An observer that "
                 "always says yes has d′ ≈ 0 and a negative c.")]))
    spread = heterogeneity_section(metrics.get("detection_theory", []))
    if spread is not None:
        out.append(spread)
    sizes = metrics.get("set_size", [])
    if sizes:
        out.append(Section("Set size", [
            Table(["experiment", "feature", "set sizes", "proportion correct",
                   "points per doubling", "95% interval", "logit slope", "95% interval"],
                  [[s["experiment"], s["feature"], ", ".join(map(str, s["set_sizes"])),
                    ", ".join(f"{k / n:.2f}" for k, n in zip(s["correct"], s["n"],
                                                              strict=True)),
                    f"{100 * s['points_per_doubling']:.1f}",
                    tables.span([100 * v for v in s["points_ci95"]]),
                    tables.number(s["logit_slope"]), tables.span(s["logit_slope_ci95"])]
                   for s in sizes], numeric_from=2),
            Charts([set_size_chart(sizes)]),
            Note("Per doubling of the set size, levels pooled: the least-squares slope of "
                 "proportion correct (percentage points, parametric-bootstrap interval) and "
                 "the slope of a logistic regression (Wald interval). Feature search stays "
                 "flat; conjunction search falls (Treisman & Gelade 1980).")]))
    diffs = metrics.get("conjunction_vs_feature", [])
    if diffs:
        out.append(Section("Feature against conjunction search", [
            Table(["set size", "feature condition", "feature", "conjunction", "difference",
                   "95% interval", "p (Fisher)"],
                  [[str(d["set_size"]), d["feature_condition"], f"{d['feature']:.2f}",
                    f"{d['conjunction']:.2f}", f"{d['difference']:+.2f}",
                    tables.span(d["difference_ci95"], 2), tables.number(d["p_value"], 2)]
                   for d in diffs], numeric_from=2),
            Note("Proportion correct on yes/no arrays; different displays, so unpaired "
                 "(Newcombe's interval of a difference, Fisher's exact test).")]))
    return out


def _points_of(metrics: dict[str, Any], fit: dict[str, Any]) -> list[dict[str, Any]]:
    """The detection points behind one fit."""
    return [p for p in metrics.get("points", []) if p["experiment"] == "detection"
            and p["feature"] == fit["feature"] and p["set_size"] == fit["set_size"]
            and p.get("spread", 0.0) == fit.get("spread", 0.0)]


def _log_axis(low: float, high: float) -> tuple[float, float]:
    return math.log10(low / 1.5), math.log10(high * 1.5)


def _ticks(low: float, high: float) -> list[float]:
    out = []
    for exponent in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1):
        for m in (1, 2, 5):
            v = m * 10.0 ** exponent
            if low <= v <= high:
                out.append(v)
    return out


@dataclass(frozen=True)
class Series:
    """One fit on a psychometric chart: a metrics.json `thresholds` entry, its detection
    `points`, and the name the legend gives it (a run, on the compare page)."""
    fit: dict[str, Any]
    points: list[dict[str, Any]]
    name: str = ""


def psychometric_chart(series: Sequence[Series], title: str | None = None) -> str:
    """Proportion correct per level (log x) with Wilson intervals, the fitted ψ, the
    threshold with its interval, and the guess rate dashed. One series (a run's page):
    black points, the interval as a band. Several (the compare page): a colour each, points
    set a little apart, each threshold a bar at the criterion's height, and a legend."""
    from visioneval.report import charts
    from visioneval.stats.psychometric import Sigmoid, psi

    one = len(series) == 1
    first = series[0].fit
    unit = first["unit"]
    title = title or f"{first['feature']} (set size {first['set_size']}): {first['status']}"
    chart = charts.Chart(title)
    left, top, width, height = 46.0, 30.0, 260.0, 160.0
    bottom = top + height
    levels = [p["level"] for s in series for p in s.points if p["level"] > 0] or [1.0]
    lo, hi = _log_axis(min(levels), max(levels))

    def x_of(level: float) -> float:
        return left + (math.log10(max(level, 1e-12)) - lo) / (hi - lo) * width

    def x_in(level: float | None) -> float:
        return left + width if level is None else min(max(x_of(level), left), left + width)

    def y_of(p: float) -> float:
        return bottom - p * height

    def colour(i: int, single: str) -> str:
        return single if one else charts.PALETTE[i % len(charts.PALETTE)]

    chart.text(4, 16, title, anchor="start", size=charts.TITLE)
    if one and first.get("threshold") is not None and first.get("threshold_ci95"):
        band = first["threshold_ci95"]
        x0, x1 = x_in(band[0]), x_in(band[1])
        chart.rect(x0, top, x1 - x0, height, BAND_FILL,
                   f"threshold 95% interval: {tables.span(band)} {unit}")
    for p in (0.0, 0.25, 0.5, 0.75, 1.0):
        chart.line(left - 4, y_of(p), left, y_of(p))
        chart.text(left - 6, y_of(p), f"{p:g}", anchor="end", baseline="central")
    for t in _ticks(10 ** lo, 10 ** hi):
        chart.line(x_of(t), bottom, x_of(t), bottom + 4)
        chart.text(x_of(t), bottom + 14, f"{t:g}")
    chart.line(left, top, left, bottom)
    chart.line(left, bottom, left + width, bottom)
    chart.text(12, top + height / 2, "proportion correct", baseline="central", rotate=-90)
    chart.text(left + width / 2, bottom + 28, f"level ({unit}, log scale)")
    guess = first["guess"]
    step = 6.0
    x = left
    while x < left + width:  # dashed
        chart.line(x, y_of(guess), min(x + step / 2, left + width), y_of(guess),
                   charts.MISS, "guess")
        x += step
    xs = [10 ** (lo + (hi - lo) * i / 80) for i in range(81)]
    for i, s in enumerate(series):
        fit = s.fit
        if fit.get("alpha") is None:
            continue
        form: Sigmoid = "weibull" if fit["form"] == "weibull" else "logistic"
        ys = [psi(v, fit["alpha"], fit["beta"], fit["guess"], fit.get("lapse", 0.0), form)
              for v in xs]
        for (xa, ya), (xb, yb) in zip(zip(xs, ys, strict=True),
                                      list(zip(xs, ys, strict=True))[1:], strict=False):
            chart.line(x_of(xa), y_of(ya), x_of(xb), y_of(yb), colour(i, CURVE), "fit")
    for i, s in enumerate(series):
        threshold = s.fit.get("threshold")
        if threshold is None:
            continue
        if one:
            chart.line(x_of(threshold), top, x_of(threshold), bottom, THRESHOLD, "threshold")
            chart.text(x_of(threshold) + 3, top + 8, f"{threshold:.3g} {unit}",
                       anchor="start", size=charts.SMALL)
            continue
        shift = (i - (len(series) - 1) / 2) * 5.0
        y = y_of(s.fit["criterion"]) + shift
        chart.line(x_of(threshold), y, x_of(threshold), bottom, colour(i, ""), "threshold")
        band = s.fit.get("threshold_ci95")
        if band:
            x0, x1 = x_in(band[0]), x_in(band[1])
            chart.line(x0, y, x1, y, colour(i, ""), "threshold-interval")
            for end, capped in ((x0, True), (x1, band[1] is not None)):
                if capped:
                    chart.line(end, y - 3, end, y + 3, colour(i, ""), "threshold-interval-cap")
    for i, s in enumerate(series):
        shift = 0.0 if one else (i - (len(series) - 1) / 2) * 4.0
        for point in s.points:
            cx, cy = x_of(point["level"]) + shift, y_of(point["p"])
            low, high = point["ci95"]
            if one:
                chart.whisker(cx, y_of(low), cx, y_of(high), 4.0)
            else:
                chart.line(cx, y_of(low), cx, y_of(high), colour(i, ""), "whisker")
            name = f"{s.name}, " if s.name else ""
            chart.rect(cx - 2.5, cy - 2.5, 5, 5, colour(i, POINT),
                       f"{name}{point['level']:g} {unit}: {point['correct']}/{point['n']} "
                       "correct")
    key_y = bottom + 44
    chart.width = max(left + width + 14, charts.text_width(title, charts.TITLE) + 12)
    if one:
        chart.line(left, key_y, left + 14, key_y, CURVE, "fit")
        chart.text(left + 18, key_y, "fitted ψ", anchor="start", baseline="central")
        _guess_key(chart, left + 80, key_y)
        chart.rect(left + 160, key_y - 4, 10, 8, BAND_FILL)
        chart.text(left + 174, key_y, "threshold 95%", anchor="start", baseline="central")
        chart.height = key_y + 12
        return chart.render()
    for i, s in enumerate(series):
        y = key_y + 14 * i
        chart.rect(left, y - 4, 10, 8, colour(i, ""))
        text = f"{s.name}: {_reading(s.fit)}"
        chart.text(left + 14, y, text, anchor="start", baseline="central", size=8)
        chart.width = max(chart.width, left + 14 + charts.text_width(text, 8) + 8)
    y = key_y + 14 * len(series) + 2
    _guess_key(chart, left, y)
    text = f"bars: threshold and 95% interval at {first['criterion']:g} correct"
    chart.text(left + 80, y, text, anchor="start", baseline="central", size=8)
    chart.width = max(chart.width, left + 80 + charts.text_width(text, 8) + 8)
    chart.height = y + 12
    return chart.render()


def _guess_key(chart: Any, x: float, y: float) -> None:
    from visioneval.report import charts

    chart.line(x, y, x + 4, y, charts.MISS, "guess")
    chart.line(x + 8, y, x + 12, y, charts.MISS, "guess")
    chart.text(x + 16, y, "guess 1/3", anchor="start", baseline="central")


def _reading(fit: dict[str, Any]) -> str:
    """A fit in the legend: its threshold and interval, or "not reached"."""
    if fit.get("threshold") is None:
        return fit["status"]
    band = fit.get("threshold_ci95")
    return (f"threshold {fit['threshold']:.3g} {fit['unit']}"
            + (f" ({tables.span(band)})" if band else ""))


def heterogeneity_section(found: list[dict[str, Any]]) -> Section | None:
    """d′ against level per feature, one line per distractor spread: the heterogeneity
    experiment beside the presence experiment's identical distractors (spread 0)."""
    per_feature: dict[str, list[dict[str, Any]]] = {}
    for d in found:
        if "dprime" in d and (d["experiment"] == "heterogeneity" or
                              (d["experiment"] == "presence" and not d.get("spread"))):
            per_feature.setdefault(d["feature"], []).append(d)
    shown = {f: ds for f, ds in per_feature.items()
             if any(d["experiment"] == "heterogeneity" for d in ds)}
    if not shown:
        return None
    return Section("Distractor heterogeneity", [
        Charts([dprime_chart(feature, ds) for feature, ds in shown.items()]),
        Note("d′ per target difference, one line per distractor spread (distractors jittered "
             "uniformly within ±spread in the target's feature; spread 0: the presence "
             "experiment's identical distractors). Lower lines: the jitter hides the target "
             "(Duncan & Humphreys 1989). Values and intervals: the d′ table above.")])


def dprime_chart(feature: str, found: list[dict[str, Any]]) -> str:
    """d′ against level (log axis), one line per spread."""
    from visioneval.report import charts

    unit = tables.SHORT_UNITS.get(found[0]["unit"], found[0]["unit"])
    chart = charts.Chart(f"{feature}: d′ by distractor spread")
    left, top, width, height = 46.0, 30.0, 260.0, 160.0
    bottom = top + height
    levels = sorted({d["level"] for d in found})
    lo, hi = _log_axis(levels[0], levels[-1])
    d_lo = min(-0.5, min(d["dprime"] for d in found))
    d_hi = max(3.5, max(d["dprime"] for d in found))

    def x_of(level: float) -> float:
        return left + (math.log10(level) - lo) / (hi - lo) * width

    def y_of(value: float) -> float:
        return bottom - (value - d_lo) / (d_hi - d_lo) * height

    chart.text(4, 16, chart.title, anchor="start", size=charts.TITLE)
    for tick in range(math.ceil(d_lo), math.floor(d_hi) + 1):
        chart.line(left - 4, y_of(tick), left, y_of(tick))
        chart.text(left - 6, y_of(tick), f"{tick:g}", anchor="end", baseline="central")
    for level in _ticks(levels[0], levels[-1]):
        chart.line(x_of(level), bottom, x_of(level), bottom + 4)
        chart.text(x_of(level), bottom + 14, f"{level:g}")
    chart.line(left, top, left, bottom)
    chart.line(left, bottom, left + width, bottom)
    chart.line(left, y_of(0.0), left + width, y_of(0.0), charts.MISS, "guess")
    chart.text(12, top + height / 2, "d′", baseline="central", rotate=-90)
    chart.text(left + width / 2, bottom + 28, f"level ({unit}, log scale)")
    lines = []
    for spread in sorted({d.get("spread", 0.0) for d in found}):
        name = f"spread {spread:g} {unit}"
        line = sorted((d for d in found if d.get("spread", 0.0) == spread),
                      key=lambda d: d["level"])
        lines.append((name, [(x_of(d["level"]), y_of(d["dprime"]),
                              f"{name}, level {d['level']:g}: d′ {d['dprime']:.2f}")
                             for d in line]))
    return _with_lines(chart, lines, left, left + width + 14, bottom + 44)


def _with_lines(chart: Any, lines: list[tuple[str, list[tuple[float, float, str]]]],
                left: float, width: float, y_key: float) -> str:
    """Each named line (points x, y and their tooltip) in its palette colour, joined, with
    square markers and a key below the axes; the chart rendered."""
    from visioneval.report import charts

    for i, (name, points) in enumerate(lines):
        colour = charts.PALETTE[i % len(charts.PALETTE)]
        for (xa, ya, _), (xb, yb, _) in zip(points, points[1:], strict=False):
            chart.line(xa, ya, xb, yb, colour, "series")
        for cx, cy, tip in points:
            chart.rect(cx - 2.5, cy - 2.5, 5, 5, colour, tip)
        chart.rect(left, y_key + 14 * i - 4, 10, 8, colour)
        chart.text(left + 14, y_key + 14 * i, name, anchor="start", baseline="central")
    chart.width = width
    chart.height = y_key + 14 * len(lines) + 4
    return chart.render()


def set_size_chart(sizes: list[dict[str, Any]]) -> str:
    """Proportion correct against set size (log2 axis), one line per condition."""
    from visioneval.report import charts

    chart = charts.Chart("Proportion correct against set size")
    left, top, width, height = 46.0, 30.0, 260.0, 160.0
    bottom = top + height
    every = sorted({s for block in sizes for s in block["set_sizes"]})
    lo, hi = math.log2(every[0]) - 0.5, math.log2(every[-1]) + 0.5

    def x_of(size: float) -> float:
        return left + (math.log2(size) - lo) / (hi - lo) * width

    def y_of(p: float) -> float:
        return bottom - p * height

    charts.axes(chart, charts.Frame(left, top, width, height),
                [(y_of(p), f"{p:g}") for p in (0.0, 0.25, 0.5, 0.75, 1.0)],
                [(x_of(s), str(s)) for s in every], "proportion correct",
                "set size (log scale)")
    lines = []
    for block in sizes:
        name = f"{block['experiment']} {block['feature']}"
        lines.append((name, [(x_of(s), y_of(k / n), f"{name}, set size {s}: {k}/{n}")
                             for s, k, n in zip(block["set_sizes"], block["correct"],
                                                block["n"], strict=True)]))
    return _with_lines(chart, lines, left, left + width + 14, bottom + 44)


def comparison(benchmark: str, views: Sequence[RunData]) -> ComparisonTable | None:
    """One row per run: the threshold per feature (and set size) with its interval; lower
    is better (a smaller difference suffices)."""
    if not views or not all("thresholds" in v.metrics or "thresholds_unavailable"
                            in v.metrics for v in views):
        return None
    columns = list(dict.fromkeys((t["feature"], t["set_size"], t["unit"]) for v in views
                                 for t in v.metrics.get("thresholds", [])))
    several = len({size for _, size, _ in columns}) > 1
    header = ["Model", "Run", *[f"{f} threshold ({u})" + (f", set size {s}" if several else "")
                                for f, s, u in columns]]
    rows, intervals = [], []
    for view in views:
        found = {(t["feature"], t["set_size"], t["unit"]): t
                 for t in view.metrics.get("thresholds", [])}
        row = [view.model, view.directory.name]
        spans: list[Interval | None] = [None, None]
        for column in columns:
            t = found.get(column, {})
            value = t.get("threshold")
            row.append("not reached" if t and value is None else
                       ("" if value is None else f"{value:.3g}"))
            band = t.get("threshold_ci95")
            span: Interval | None = None
            if value is not None and band:
                span = (band[0], math.inf if band[1] is None else band[1])
            spans.append(span)
        rows.append(row)
        intervals.append(spans)
    return ComparisonTable(benchmark, header, rows, [False] * len(columns), runs=list(views),
                           intervals=intervals,
                           units="Thresholds in each column's unit.",
                           notes=["Threshold: the level where proportion correct reaches "
                                  "the run's criterion (detection); lower is better. "
                                  "\"not reached\": none within the tested levels."],
                           sections=comparison_sections(views))


def run_label(view: RunData) -> str:
    return f"{view.model} ({view.directory.name})"


def comparison_sections(views: Sequence[RunData]) -> list[Section]:
    """The compare page's figures and test: one chart per detection fit that two or more
    runs have, their curves overlaid, and each run's thresholds against the first's."""
    if len(views) < 2:
        return []
    fits: dict[tuple[str, int], list[Series]] = {}
    for view in views:
        for t in view.metrics.get("thresholds", []):
            fits.setdefault((t["feature"], t["set_size"]), []).append(
                Series(t, _points_of(view.metrics, t), run_label(view)))
    shared = {key: found for key, found in fits.items() if len(found) > 1}
    if not shared:
        return []
    charts = [psychometric_chart(found, f"{feature} (set size {size})")
              for (feature, size), found in shared.items()]
    out = [Section("Psychometric functions, run against run", [
        Charts(charts),
        Note("Per feature and set size that two or more runs fitted: each run's proportion "
             "correct per level (squares, Wilson 95% intervals, set a little apart where "
             "runs share a level), its fitted ψ in the same colour, and its threshold as a "
             "vertical line with its 95% interval as a bar at the criterion's height; the "
             "legend gives each run's threshold. A curve further left reached the "
             "criterion at a smaller difference.")])]
    found = difference_section(views)
    if found is not None:
        out.append(found)
    return out


def difference_section(views: Sequence[RunData]) -> Section | None:
    """Each run after the first against the first, per fit both have (difference.py)."""
    from visioneval.benchmarks.psychophysics.difference import differences, interval_text
    from visioneval.stats.psychometric_fit import RESAMPLES

    found = differences([(run_label(v), v.metrics) for v in views], RESAMPLES)
    if not found:
        return None
    rows, why = [], []
    for d in found:
        verdict = ("no test" if d.significant is None else
                   "significant" if d.significant else "not significant")
        rows.append([d.other, f"{d.feature} ({d.unit})" if d.unit else d.feature,
                     str(d.set_size), tables.number(d.first_threshold),
                     tables.number(d.other_threshold),
                     "-" if d.difference is None else f"{d.difference:+.3g}",
                     interval_text(d.difference_ci95),
                     "-" if d.ratio is None else f"×{d.ratio:.3g}",
                     interval_text(d.ratio_ci95),
                     "-" if d.p_value is None else f"{d.p_value:.3g}", verdict])
        where = f"{d.other}, {d.feature} (set size {d.set_size})"
        if d.reason:
            why.append(f"{where}: {d.reason}")
        elif d.undefined:
            why.append(f"{where}: in {d.undefined} of {d.pairs} bootstrap pairs neither "
                       "refit reached the criterion; left out of the intervals, ties in p")
    pairs = sorted({d.pairs for d in found if d.p_value is not None})
    used = (f" ({' or '.join(map(str, pairs))} pairs here: refits that did not converge "
            "are left out)") if pairs and pairs != [RESAMPLES] else ""
    blocks: list[Any] = [
        Table(["run", "feature (unit)", "set size", "threshold, first run",
               "threshold, this run", "this − first", "95% interval", "this / first",
               "95% interval", "p", "at 5%"], rows, numeric_from=2),
        Note(f"Each run against the first, {run_label(views[0])}, per feature and set size "
             "both fitted: the difference of the thresholds and their ratio (levels are on "
             "ratio scales). Parametric bootstrap (Wichmann and Hill 2001): each run's "
             f"detection counts are refitted, {RESAMPLES} data sets are simulated from the "
             "fit and refitted, and the i-th refit of one run is paired with the i-th of the "
             f"other{used}; the runs are independent samples, so each has its own random "
             "numbers. Interval: the 2.5th and 97.5th percentiles of the paired differences "
             "and ratios (\"unbounded\": more than 2.5% of one run's refits never reached "
             "the criterion). p: two-sided, twice the smaller share of differences at or "
             "below 0 and at or above 0, with 1 added to each count; no correction for the "
             "number of tests.")]
    if why:
        blocks.append(Items(why))
    return Section("Threshold differences (parametric bootstrap)", blocks)
