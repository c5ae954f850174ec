"""The report's psychophysics sections: per feature the psychometric function (proportion
correct per level with binomial 95% intervals on a log axis, the fitted ψ, the threshold
with its interval band, the guess rate dashed), the thresholds table, the d′ table, the
set-size effect, feature against conjunction search; and `compare`'s thresholds table.
Charts are drawn with `report.charts`' shapes (no matplotlib)."""

from __future__ import annotations

import math
from collections.abc import Sequence
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
        charts = [psychometric_chart(t, [p for p in metrics.get("points", [])
                                         if p["experiment"] == "detection"
                                         and p["feature"] == t["feature"]
                                         and p["set_size"] == t["set_size"]])
                  for t in thresholds]
        missing = [m for m in metrics.get("missing_levels", [])]
        blocks: list[Any] = [
            Table(tables.THRESHOLD_HEADER, tables.threshold_rows(metrics), numeric_from=2),
            Charts(charts),
            Note(f"Threshold: the level where the fitted ψ(x) = γ + (1 − γ − λ)·F(x) reaches "
                 f"{metrics['criterion']:g} correct (γ = 1/3, λ fitted within [0, 0.1], F "
                 f"{metrics['form']}); 95% interval: parametric bootstrap. Slope: dψ/dx at the "
                 "threshold. \"not reached\": no threshold within the tested levels, never "
                 "an extrapolation. Points: proportion correct with Wilson 95% intervals.")]
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


def psychometric_chart(fit: dict[str, Any], points: list[dict[str, Any]]) -> str:
    """Proportion correct per level (log x) with Wilson intervals, the fitted ψ, the
    threshold and its interval as a band, and the guess rate dashed."""
    from visioneval.report import charts
    from visioneval.stats.psychometric import Sigmoid, psi

    unit = fit["unit"]
    title = f"{fit['feature']} (set size {fit['set_size']}): {fit['status']}"
    chart = charts.Chart(title)
    left, top, width, height = 46.0, 30.0, 260.0, 160.0
    bottom = top + height
    levels = [p["level"] for p in points if p["level"] > 0] or [1.0]
    lo, hi = _log_axis(min(levels), max(levels))

    def x_of(level: float) -> float:
        return left + (math.log10(max(level, 1e-12)) - lo) / (hi - lo) * width

    def y_of(p: float) -> float:
        return bottom - p * height

    chart.text(4, 16, title, anchor="start", size=charts.TITLE)
    threshold, band = fit.get("threshold"), fit.get("threshold_ci95")
    if threshold is not None and band:
        x0 = min(max(x_of(band[0]), left), left + width)
        x1 = left + width if band[1] is None else min(max(x_of(band[1]), left), left + width)
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
    guess = fit["guess"]
    step = 6.0
    x = left
    while x < left + width:  # dashed
        chart.line(x, y_of(guess), min(x + step / 2, left + width), y_of(guess),
                   charts.MISS, "guess")
        x += step
    if fit.get("alpha") is not None:
        form: Sigmoid = "weibull" if fit["form"] == "weibull" else "logistic"
        xs = [10 ** (lo + (hi - lo) * i / 80) for i in range(81)]
        ys = [psi(v, fit["alpha"], fit["beta"], guess, fit.get("lapse", 0.0), form)
              for v in xs]
        for (xa, ya), (xb, yb) in zip(zip(xs, ys, strict=True), list(zip(xs, ys,
                                                                             strict=True))[1:],
                                      strict=False):
            chart.line(x_of(xa), y_of(ya), x_of(xb), y_of(yb), CURVE, "fit")
    if threshold is not None:
        chart.line(x_of(threshold), top, x_of(threshold), bottom, THRESHOLD, "threshold")
        chart.text(x_of(threshold) + 3, top + 8, f"{threshold:.3g} {unit}", anchor="start",
                   size=charts.SMALL)
    for point in points:
        cx, cy = x_of(point["level"]), y_of(point["p"])
        low, high = point["ci95"]
        chart.whisker(cx, y_of(low), cx, y_of(high), 4.0)
        chart.rect(cx - 2.5, cy - 2.5, 5, 5, POINT,
                   f"{point['level']:g} {unit}: {point['correct']}/{point['n']} correct")
    key_y = bottom + 44
    chart.line(left, key_y, left + 14, key_y, CURVE, "fit")
    chart.text(left + 18, key_y, "fitted ψ", anchor="start", baseline="central")
    chart.line(left + 80, key_y, left + 84, key_y, charts.MISS, "guess")
    chart.line(left + 88, key_y, left + 92, key_y, charts.MISS, "guess")
    chart.text(left + 96, key_y, "guess 1/3", anchor="start", baseline="central")
    chart.rect(left + 160, key_y - 4, 10, 8, BAND_FILL)
    chart.text(left + 174, key_y, "threshold 95%", anchor="start", baseline="central")
    chart.width = max(left + width + 14, charts.text_width(title, charts.TITLE) + 12)
    chart.height = key_y + 12
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

    chart.text(4, 16, chart.title, anchor="start", size=charts.TITLE)
    for p in (0.0, 0.25, 0.5, 0.75, 1.0):
        chart.line(left - 4, y_of(p), left, y_of(p))
        chart.text(left - 6, y_of(p), f"{p:g}", anchor="end", baseline="central")
    for s in every:
        chart.line(x_of(s), bottom, x_of(s), bottom + 4)
        chart.text(x_of(s), bottom + 14, str(s))
    chart.line(left, top, left, bottom)
    chart.line(left, bottom, left + width, bottom)
    chart.text(12, top + height / 2, "proportion correct", baseline="central", rotate=-90)
    chart.text(left + width / 2, bottom + 28, "set size (log scale)")
    y_key = bottom + 44
    for i, block in enumerate(sizes):
        colour = charts.PALETTE[i % len(charts.PALETTE)]
        xy = [(x_of(s), y_of(k / n)) for s, k, n in zip(block["set_sizes"], block["correct"],
                                                        block["n"], strict=True)]
        for (xa, ya), (xb, yb) in zip(xy, xy[1:], strict=False):
            chart.line(xa, ya, xb, yb, colour, "series")
        name = f"{block['experiment']} {block['feature']}"
        for (cx, cy), s, k, n in zip(xy, block["set_sizes"], block["correct"], block["n"],
                                     strict=True):
            chart.rect(cx - 2.5, cy - 2.5, 5, 5, colour, f"{name}, set size {s}: {k}/{n}")
        chart.rect(left, y_key + 14 * i - 4, 10, 8, colour)
        chart.text(left + 14, y_key + 14 * i, name, anchor="start", baseline="central")
    chart.width = left + width + 14
    chart.height = y_key + 14 * len(sizes) + 4
    return chart.render()


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
                           notes=["Threshold: the level where proportion correct reaches "
                                  "the run's criterion (detection); lower is better. "
                                  "\"not reached\": none within the tested levels."])
