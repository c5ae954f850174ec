"""metrics.json from the records, streamed once: counts per (experiment, feature, level, set
size, target present), then the fits: psychometric thresholds for detection (three
alternatives, γ = 1/3), d′ and c for the yes/no experiments, set-size slopes where several
set sizes were run, and feature against conjunction search at matched set sizes.

A failed request is an error, in no figure. An answered trial whose answer names no feature
(detection) counts as a wrong choice; one with neither yes nor no is left out of the hit and
false-alarm rates. Both are counted as unparsed."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from visioneval.benchmarks.psychophysics.params import UNITS
from visioneval.core.records import Record
from visioneval.stats.binomial import wilson
from visioneval.stats.detection import dprime
from visioneval.stats.psychometric_fit import Dispersion, fit, open_ends
from visioneval.stats.setsize import conjunction_vs_feature, set_size_effect

GUESS = 1 / 3  # one of orientation, color, size


@dataclass
class Cell:
    n: int = 0  # answered
    correct: int = 0
    unparsed: int = 0
    said_yes: int = 0
    errors: int = 0


Key = tuple[str, str, float, int, bool, float]  # experiment, feature, level, set size,
# present, distractor spread
FITTED = ("detection",)  # the experiments a psychometric function is fitted to
YES_NO = ("presence", "conjunction", "heterogeneity")


@dataclass(frozen=True)
class Settings:
    criterion: float
    form: str
    bootstrap: int
    seed: int
    dispersion: Dispersion = "binomial"  # the bootstrap's counts (stats.psychometric_fit)


def tally(records: Iterable[Record]) -> dict[Key, Cell]:
    cells: dict[Key, Cell] = defaultdict(Cell)
    for record in records:
        meta = record.metadata
        try:
            key = (str(meta["experiment"]), str(meta["feature"]), float(meta["level"]),
                   int(meta["set_size"]), bool(meta["target_present"]),
                   float(meta.get("spread") or 0.0))
        except (KeyError, TypeError, ValueError):
            continue  # not a psychophysics record
        cell = cells[key]
        if not record.ok:
            cell.errors += 1
            continue
        answer = record.parsed.get("answer")
        cell.n += 1
        cell.correct += int(record.scores.get("answer", {}).get("correct", 0.0) == 1.0)
        cell.unparsed += int(answer is None)
        cell.said_yes += int(answer == "yes")
    return cells



def summarize(records: Iterable[Record], settings: Settings) -> dict[str, Any]:
    cells = tally(records)
    experiments: dict[str, dict[str, int]] = {}
    for (experiment, *_), cell in sorted(cells.items()):
        block = experiments.setdefault(experiment, {"n": 0, "n_errors": 0, "n_unparsed": 0})
        block["n"] += cell.n
        block["n_errors"] += cell.errors
        block["n_unparsed"] += cell.unparsed
    out: dict[str, Any] = {
        "criterion": settings.criterion, "form": settings.form, "guess": GUESS,
        "dispersion_model": settings.dispersion,
        "n": sum(b["n"] for b in experiments.values()),
        "n_errors": sum(b["n_errors"] for b in experiments.values()),
        "n_unparsed": sum(b["n_unparsed"] for b in experiments.values()),
        "experiments": experiments}
    points, missing = _points(cells)
    out["points"], out["missing_levels"] = points, missing
    if any(e in experiments for e in FITTED):
        out["thresholds"] = _thresholds(points, missing, settings)
    else:
        out["thresholds_unavailable"] = "no detection trials in this run"
    yes_no = [e for e in YES_NO if e in experiments]
    if yes_no:
        out["detection_theory"] = _detection_theory(cells)
    else:
        out["detection_theory_unavailable"] = ("no presence, conjunction or heterogeneity "
                                               "trials in this run")
    sizes, why = _set_size(cells, settings)
    out["set_size" if why is None else "set_size_unavailable"] = sizes if why is None else why
    diffs, why = _conjunction(cells)
    out["conjunction_vs_feature" if why is None else "conjunction_vs_feature_unavailable"] = \
        diffs if why is None else why
    return out


def _points(cells: dict[Key, Cell]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Proportion correct per (experiment, feature, set size, spread, level), present and
    absent arrays together; levels without an answered trial apart, with the reason."""
    merged: dict[tuple[str, str, int, float, float], Cell] = defaultdict(Cell)
    for (experiment, feature, level, size, _, spread), cell in cells.items():
        into = merged[(experiment, feature, size, spread, level)]
        into.n += cell.n
        into.correct += cell.correct
        into.unparsed += cell.unparsed
        into.errors += cell.errors
    points, missing = [], []
    for (experiment, feature, size, spread, level), cell in sorted(merged.items()):
        where = {"experiment": experiment, "feature": feature, "set_size": size,
                 "spread": spread, "level": level}
        if cell.n == 0:
            missing.append({**where, "n_errors": cell.errors,
                            "reason": f"no answered trial ({cell.errors} failed requests)"})
            continue
        points.append({**where, "n": cell.n, "correct": cell.correct,
                       "n_unparsed": cell.unparsed, "p": cell.correct / cell.n,
                       "ci95": wilson(cell.correct, cell.n)})
    return points, missing


def _thresholds(points: list[dict[str, Any]], missing: list[dict[str, Any]],
                settings: Settings) -> list[dict[str, Any]]:
    conditions: dict[tuple[str, str, int, float], list[dict[str, Any]]] = defaultdict(list)
    for point in points:
        if point["experiment"] in FITTED:
            conditions[_condition(point)].append(point)
    for gone in missing:
        if gone["experiment"] in FITTED:
            conditions.setdefault(_condition(gone), [])
    out = []
    for (experiment, feature, size, spread), found in sorted(conditions.items()):
        block: dict[str, Any] = {
            "experiment": experiment, "feature": feature, "set_size": size, "spread": spread,
            "unit": UNITS.get(feature, ""),
            "criterion": settings.criterion, "guess": GUESS, "form": settings.form,
            "n_trials": sum(p["n"] for p in found), "n_levels": len(found)}
        if len(found) < 2:
            out.append({**block, "status": "not reached",
                        "reason": f"{len(found)} level(s) with answered trials; a fit needs "
                        "at least 2"})
            continue
        levels = [p["level"] for p in found]
        block |= {"lowest_level": min(levels), "highest_level": max(levels)}
        try:
            done = fit(levels, [p["correct"] for p in found], [p["n"] for p in found],
                       GUESS, "weibull" if settings.form == "weibull" else "logistic",
                       settings.criterion, resamples=settings.bootstrap, seed=settings.seed,
                       dispersion=settings.dispersion)
        except ValueError as exc:
            out.append({**block, "status": "not reached", "reason": str(exc)})
            continue
        block |= {"status": done.status, "reason": done.reason, "alpha": done.alpha,
                  "beta": done.beta, "lapse": done.lapse, "lapse_ci95": done.lapse_ci,
                  "deviance": done.deviance, "deviance_p": done.deviance_p,
                  "chance_p": done.chance_p, "resamples": done.resamples,
                  "dispersion": done.dispersion, "dispersion_p": done.dispersion_p}
        if done.threshold is not None:
            block |= {"threshold": done.threshold, "slope": done.slope,
                      "slope_ci95": done.slope_ci}
            if done.threshold_ci is not None:
                block["threshold_ci95"] = open_ends(done.threshold_ci)
        out.append({k: v for k, v in block.items() if v is not None})
    return out


def _condition(point: dict[str, Any]) -> tuple[str, str, int, float]:
    """What one psychometric function is fitted to: experiment, feature, set size, spread."""
    return point["experiment"], point["feature"], point["set_size"], point["spread"]


def _detection_theory(cells: dict[Key, Cell]) -> list[dict[str, Any]]:
    pairs: dict[tuple[str, str, int, float, float], dict[bool, Cell]] = defaultdict(dict)
    for (experiment, feature, level, size, present, spread), cell in cells.items():
        if experiment in YES_NO:
            pairs[(experiment, feature, size, spread, level)][present] = cell
    out = []
    for (experiment, feature, size, spread, level), both in sorted(pairs.items()):
        signal, noise = both.get(True, Cell()), both.get(False, Cell())
        # an unparsed answer is neither yes nor no: out of the rates
        n_signal, n_noise = signal.n - signal.unparsed, noise.n - noise.unparsed
        block: dict[str, Any] = {
            "experiment": experiment, "feature": feature, "set_size": size, "spread": spread,
            "level": level, "unit": UNITS.get(feature, ""), "n_signal": n_signal,
            "hits": signal.said_yes, "n_noise": n_noise, "false_alarms": noise.said_yes,
            "n_unparsed": signal.unparsed + noise.unparsed}
        if n_signal == 0 or n_noise == 0:
            block["reason"] = ("no yes/no answer to a target-present array" if n_signal == 0
                               else "no yes/no answer to a target-absent array")
        else:
            d = dprime(signal.said_yes, n_signal, noise.said_yes, n_noise)
            block |= {"hit_rate": d.hit_rate, "false_alarm_rate": d.false_alarm_rate,
                      "dprime": d.dprime, "dprime_ci95": d.dprime_ci, "c": d.criterion,
                      "c_ci95": d.criterion_ci}
        out.append(block)
    return out


def _by_size(cells: dict[Key, Cell], experiment: str, feature: str | None = None,
             level: float | None = None) -> dict[int, Cell]:
    sizes: dict[int, Cell] = defaultdict(Cell)
    for (e, f, lv, size, *_), cell in cells.items():
        if e == experiment and (feature is None or f == feature) \
                and (level is None or lv == level):
            sizes[size].n += cell.n
            sizes[size].correct += cell.correct
    return {s: c for s, c in sizes.items() if c.n > 0}


def _set_size(cells: dict[Key, Cell], settings: Settings
              ) -> tuple[list[dict[str, Any]], str | None]:
    conditions = sorted({(key[0], key[1]) for key in cells})
    out = []
    for experiment, feature in conditions:
        sizes = _by_size(cells, experiment, feature)
        if len(sizes) < 2:
            continue
        order = sorted(sizes)
        k, n = [sizes[s].correct for s in order], [sizes[s].n for s in order]
        effect = set_size_effect(order, k, n, resamples=settings.bootstrap or 1000,
                                 seed=settings.seed)
        out.append({"experiment": experiment, "feature": feature, "set_sizes": order,
                    "n": n, "correct": k, "logit_slope": effect.logit_slope,
                    "logit_slope_ci95": effect.logit_slope_ci,
                    "points_per_doubling": effect.points_per_doubling,
                    "points_ci95": effect.points_ci})
    if not out:
        return [], "every condition was run at one set size"
    return out, None


def _conjunction(cells: dict[Key, Cell]) -> tuple[list[dict[str, Any]], str | None]:
    """The conjunction arrays against the presence arrays of the colour feature at the
    level nearest (on a log scale) to the conjunction's colour difference, at each set size
    both were run at."""
    conjunction = [(lv, s) for (e, _, lv, s, *_) in cells if e == "conjunction"]
    if not conjunction:
        return [], "no conjunction trials in this run"
    target = conjunction[0][0]
    colour = sorted({lv for (e, f, lv, *_) in cells
                     if e == "presence" and f == "color" and lv > 0})
    if not colour:
        return [], "no presence trials of the color feature to compare with"
    nearest = min(colour, key=lambda lv: abs(math.log(lv / target)))
    feature, conj = _by_size(cells, "presence", "color", nearest), _by_size(cells,
                                                                             "conjunction")
    sizes = sorted(set(feature) & set(conj))
    if not sizes:
        return [], "no set size has answered trials of both conditions"
    found = conjunction_vs_feature(
        sizes, [feature[s].correct for s in sizes], [feature[s].n for s in sizes],
        [conj[s].correct for s in sizes], [conj[s].n for s in sizes])
    name = f"presence color {nearest:g} {UNITS['color']}"
    return [{"set_size": d.set_size, "feature_condition": name, "feature": d.feature,
             "conjunction": d.conjunction, "difference": d.difference,
             "difference_ci95": d.interval, "p_value": d.p_value} for d in found], None
