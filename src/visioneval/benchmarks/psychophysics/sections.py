"""The report's psychophysics sections: per feature the psychometric function (proportion
correct per level with binomial 95% intervals on a log axis, the fitted ψ, the threshold
with its interval band, the guess rate dashed), the thresholds table, the d′ table, the
set-size effect, feature against conjunction search; and `compare`'s thresholds table.
The charts are data (`core.figures`); the page draws them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from visioneval.benchmarks.psychophysics import tables
from visioneval.benchmarks.psychophysics.difference import differences, interval_text
from visioneval.core.blocks import Charts, ComparisonTable, Items, Note, Section, Table
from visioneval.core.figures import (
    Axis,
    LevelPoint,
    LinePoint,
    Lines,
    NamedLine,
    Psychometric,
    PsychometricSeries,
    SigmoidFit,
    Tick,
)
from visioneval.core.marks import Interval
from visioneval.core.view import ReadableRun
from visioneval.stats.psychometric_fit import RESAMPLES


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
                 f"{metrics['form']}'s β; dispersion: Pearson X² over the fit's residual "
                 "degrees of freedom, about 1 when the answers at a level vary as one "
                 "binomial observer's (intervals: "
                 f"{_DISPERSION[metrics.get('dispersion_model', 'binomial')]}). \"not "
                 "reached\": no threshold within the tested levels, never an extrapolation. "
                 "Points: proportion correct with Wilson 95% intervals.")]
        notes = tables.dispersion_notes(metrics) + tables.few_trials_notes(metrics)
        if notes:
            blocks.append(Items(notes))
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


_DISPERSION = {"binomial": "binomial refits",
               "fitted": "refits as dispersed as the dispersion says, t reference"}


def _points_of(metrics: dict[str, Any], fit: dict[str, Any]) -> list[dict[str, Any]]:
    """The detection points behind one fit."""
    return [p for p in metrics.get("points", []) if p["experiment"] == "detection"
            and p["feature"] == fit["feature"] and p["set_size"] == fit["set_size"]
            and p.get("spread", 0.0) == fit.get("spread", 0.0)]


def _log_axis(low: float, high: float) -> tuple[float, float]:
    """A log axis' ends: the tested levels with room on either side."""
    return low / 1.5, high * 1.5


def _ticks(low: float, high: float) -> list[Tick]:
    """1, 2 and 5 times the powers of ten between `low` and `high`."""
    out = []
    for exponent in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1):
        for m in (1, 2, 5):
            v = m * 10.0 ** exponent
            if low <= v <= high:
                out.append(Tick(v, f"{v:g}"))
    return out


PROPORTION = [Tick(p, f"{p:g}") for p in (0.0, 0.25, 0.5, 0.75, 1.0)]


@dataclass(frozen=True)
class Series:
    """One fit on a psychometric chart: a metrics.json `thresholds` entry, its detection
    `points`, and the name the legend gives it (a run, on the compare page)."""
    fit: dict[str, Any]
    points: list[dict[str, Any]]
    name: str = ""


def psychometric_chart(series: Sequence[Series], title: str | None = None) -> Psychometric:
    """Proportion correct per level with Wilson intervals, the fitted ψ, the threshold with
    its interval, and the guess rate. One series: a run's page; several: the compare
    page's curves overlaid."""
    first = series[0].fit
    title = title or f"{first['feature']} (set size {first['set_size']}): {first['status']}"
    levels = [p["level"] for s in series for p in s.points if p["level"] > 0] or [1.0]
    low, high = _log_axis(min(levels), max(levels))
    unit = first["unit"]
    return Psychometric(title, Axis(f"level ({unit}, log scale)", low, high,
                                    _ticks(low, high), "log10"),
                        unit, first["guess"], [_series(s) for s in series])


def _series(s: Series) -> PsychometricSeries:
    fit = s.fit
    band = fit.get("threshold_ci95")
    curve = None if fit.get("alpha") is None else SigmoidFit(
        fit["alpha"], fit["beta"], fit["guess"], fit.get("lapse", 0.0),
        "weibull" if fit["form"] == "weibull" else "logistic")
    return PsychometricSeries(
        [LevelPoint(p["level"], p["p"], (p["ci95"][0], p["ci95"][1]), p["correct"], p["n"])
         for p in s.points], curve, fit["criterion"], fit.get("threshold"),
        (band[0], band[1]) if band else None, tables.span(band) if band else "",
        _reading(fit), s.name)


def _reading(fit: dict[str, Any]) -> str:
    """A fit in the legend: its threshold and interval (and φ when the answers vary more
    than binomial), or "not reached"."""
    if fit.get("threshold") is None:
        return fit["status"]
    band = fit.get("threshold_ci95")
    wide = tables.overdispersed(fit)
    return (f"threshold {fit['threshold']:.3g} {fit['unit']}"
            + (f" ({tables.span(band)})" if band else "") + (f"; {wide}" if wide else ""))


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


def dprime_chart(feature: str, found: list[dict[str, Any]]) -> Lines:
    """d′ against level (log axis), one line per spread."""
    unit = tables.SHORT_UNITS.get(found[0]["unit"], found[0]["unit"])
    levels = sorted({d["level"] for d in found})
    d_lo = min(-0.5, min(d["dprime"] for d in found))
    d_hi = max(3.5, max(d["dprime"] for d in found))
    lines = []
    for spread in sorted({d.get("spread", 0.0) for d in found}):
        name = f"spread {spread:g} {unit}"
        line = sorted((d for d in found if d.get("spread", 0.0) == spread),
                      key=lambda d: d["level"])
        lines.append(NamedLine(name, [LinePoint(d["level"], d["dprime"],
                                                f"{name}, level {d['level']:g}: "
                                                f"d′ {d['dprime']:.2f}") for d in line]))
    return Lines(f"{feature}: d′ by distractor spread",
                 Axis(f"level ({unit}, log scale)", *_log_axis(levels[0], levels[-1]),
                      _ticks(levels[0], levels[-1]), "log10"),
                 Axis("d′", d_lo, d_hi, [Tick(t, f"{t:g}") for t in
                                         range(math.ceil(d_lo), math.floor(d_hi) + 1)]),
                 lines, chance=0.0)


def set_size_chart(sizes: list[dict[str, Any]]) -> Lines:
    """Proportion correct against set size (log2 axis), one line per condition."""
    every = sorted({s for block in sizes for s in block["set_sizes"]})
    lines = []
    for block in sizes:
        name = f"{block['experiment']} {block['feature']}"
        lines.append(NamedLine(name, [LinePoint(s, k / n, f"{name}, set size {s}: {k}/{n}")
                                      for s, k, n in zip(block["set_sizes"], block["correct"],
                                                         block["n"], strict=True)]))
    return Lines("Proportion correct against set size",
                 Axis("set size (log scale)", every[0] / math.sqrt(2),
                      every[-1] * math.sqrt(2), [Tick(s, str(s)) for s in every], "log2"),
                 Axis("proportion correct", 0.0, 1.0, PROPORTION), lines)


def comparison(benchmark: str, views: Sequence[ReadableRun]) -> ComparisonTable | None:
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
                span = (-math.inf if band[0] is None else band[0],
                        math.inf if band[1] is None else band[1])
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


def run_label(view: ReadableRun) -> str:
    return f"{view.model} ({view.directory.name})"


def comparison_sections(views: Sequence[ReadableRun]) -> list[Section]:
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


def difference_section(views: Sequence[ReadableRun]) -> Section | None:
    """Each run after the first against the first, per fit both have (difference.py)."""
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
