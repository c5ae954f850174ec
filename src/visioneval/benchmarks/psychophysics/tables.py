"""The tables a psychophysics run shows (terminal, thresholds.csv and dprime.csv, report):
thresholds per feature and d′ per level, as rows of text, one source for all three."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from visioneval.core.printed import print_table
from visioneval.stats.psychometric_fit import (
    HOLDING_LEVELS,
    HOLDING_TRIALS_PER_LEVEL,
    OVERDISPERSED_P,
)
from visioneval.terminal import line

if TYPE_CHECKING:
    from rich.console import Console

THRESHOLD_HEADER = ["feature", "set size", "spread", "threshold", "95% interval",
                    "slope at threshold", "beta", "lapse", "dispersion", "trials", "status"]
DPRIME_HEADER = ["experiment", "feature", "set size", "spread", "level", "hits", "false alarms",
                 "d′ [95%]", "c [95%]"]


def number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def fixed(value: float | None) -> str:
    """Two decimals, without a negative zero."""
    return "-" if value is None else f"{value + 0.0:.2f}".replace("-0.00", "0.00")


def dispersion(value: float | None) -> str:
    """φ with two decimals ("0.00" for a fit through every point, not 8e-09)."""
    return "-" if value is None else f"{value:.2f}" if value < 100 else f"{value:.0f}"


def span(found: Sequence[float | None] | None, digits: int = 3) -> str:
    if not found:
        return "-"
    low, high = found
    lower = "below the tested levels" if low is None else number(low, digits)
    upper = "beyond the tested levels" if high is None else number(high, digits)
    return f"{lower} to {upper}"


def threshold_rows(metrics: dict[str, Any]) -> list[list[str]]:
    rows = []
    for t in metrics.get("thresholds", []):
        reached = t.get("threshold") is not None
        rows.append([t["feature"], str(t["set_size"]), number(t.get("spread", 0.0)),
                     f"{number(t['threshold'])} {t['unit']}" if reached else "-",
                     span(t.get("threshold_ci95")), number(t.get("slope")),
                     number(t.get("beta")), number(t.get("lapse"), 2),
                     dispersion(t.get("dispersion")), str(t["n_trials"]), t["status"]])
    return rows


def overdispersed(fit: dict[str, Any]) -> str:
    """"φ 3.35, more than binomial" when a fit's X² says the answers vary more than binomial
    between levels (its p below OVERDISPERSED_P), else ""."""
    p, phi = fit.get("dispersion_p"), fit.get("dispersion")
    if not isinstance(p, int | float) or not isinstance(phi, int | float) \
            or p >= OVERDISPERSED_P:
        return ""
    return f"φ {dispersion(phi)}, more than binomial"


def dispersion_notes(metrics: dict[str, Any]) -> list[str]:
    """One line per threshold whose fit's lack of fit says the answers vary more than
    binomial between levels (X²'s p below OVERDISPERSED_P): with binomial intervals the
    interval may be too short (docs/psychophysics.md measures by how much)."""
    fitted = metrics.get("dispersion_model") == "fitted"
    out = []
    for t in metrics.get("thresholds", []):
        p = t.get("dispersion_p")
        if not overdispersed(t) or t.get("threshold") is None:
            continue
        then = ("widened for it (--dispersion fitted)" if fitted else
                "may be too short (--dispersion fitted widens it)")
        out.append(f"{t['feature']} (set size {t['set_size']}{_spread(t)}): answers vary "
                   f"more than binomial between levels (φ {dispersion(t['dispersion'])}, p "
                   f"{p:.2g}): the interval {then}")
    return out


def few_trials_notes(metrics: dict[str, Any]) -> list[str]:
    """One line per threshold with an interval from a design unlike those whose interval was
    measured to hold (at most HOLDING_LEVELS levels of HOLDING_TRIALS_PER_LEVEL trials or
    more, on average): such designs covered 89-93% (docs/psychophysics.md, "With few trials
    per level")."""
    out = []
    for t in metrics.get("thresholds", []):
        levels, trials = t.get("n_levels"), t.get("n_trials")
        if t.get("threshold_ci95") is None or not levels or not trials or (
                levels <= HOLDING_LEVELS and trials / levels >= HOLDING_TRIALS_PER_LEVEL):
            continue
        out.append(f"{t['feature']} (set size {t['set_size']}{_spread(t)}): {levels} levels "
                   f"of {trials / levels:.3g} trials: the interval may be too short")
    return out


def threshold_reasons(metrics: dict[str, Any]) -> list[str]:
    """Why each threshold that was not reached was not."""
    return [f"{t['feature']} (set size {t['set_size']}{_spread(t)}): {t['reason']}"
            for t in metrics.get("thresholds", []) if t.get("reason")]


def _spread(t: dict[str, Any]) -> str:
    return f", spread {number(t['spread'])}" if t.get("spread") else ""


def dprime_rows(metrics: dict[str, Any]) -> list[list[str]]:
    rows = []
    for d in metrics.get("detection_theory", []):
        measured = "dprime" in d
        rows.append([d["experiment"], d["feature"], str(d["set_size"]),
                     number(d.get("spread", 0.0)), f"{number(d['level'])} {d['unit']}",
                     f"{d['hits']}/{d['n_signal']}",
                     f"{d['false_alarms']}/{d['n_noise']}",
                     f"{fixed(d['dprime'])} [{fixed(d['dprime_ci95'][0])}, "
                     f"{fixed(d['dprime_ci95'][1])}]" if measured else d.get("reason", "-"),
                     f"{fixed(d['c'])} [{fixed(d['c_ci95'][0])}, {fixed(d['c_ci95'][1])}]"
                     if measured else "-"])
    return rows


def write_csv(metrics: dict[str, Any], directory: Path) -> list[Path]:
    written = []
    for name, header, rows in (("thresholds.csv", THRESHOLD_HEADER, threshold_rows(metrics)),
                               ("dprime.csv", DPRIME_HEADER, dprime_rows(metrics))):
        if rows:
            path = directory / name
            with path.open("w", newline="", encoding="utf-8") as handle:
                writer = csv.writer(handle)
                writer.writerow(header)
                writer.writerows(rows)
            written.append(path)
    return written


SHORT_UNITS = {"deg": "deg", "dE00": "ΔE00", "log_area_ratio": "ln(area)"}


def slope_note(form: str) -> str:
    """What the slope and β columns are: β is the fitted sigmoid's parameter (unit-free for
    the Weibull, per unit of the level for the logistic), not dψ/dx."""
    beta = ("the fitted Weibull's β (unit-free)" if form == "weibull" else
            f"the fitted {form}'s β (per unit of the level)")
    return (f"slope at threshold: dψ/dx there (proportion correct per unit of the level); "
            f"β: {beta}; φ: Pearson X² over the fit's residual degrees of freedom (about 1 "
            "when the answers vary as a binomial count's).")


def show_main(metrics: dict[str, Any], title: str, console: Console) -> None:
    """The tables a run ends with (within 100 columns): the thresholds with their 95%
    intervals, then d′ with its interval at the highest level of each yes/no condition
    where it was measured."""
    _thresholds(metrics, title, console, trials=False)
    strongest = highest_levels(metrics.get("detection_theory", []))
    if strongest:
        spreads = any(d.get("spread") for d in strongest)
        console.print()
        print_table(console, f"{title}: yes/no, d′ at each condition's highest level "
                    "(heterogeneity: its widest spread)",
                    ["experiment", "feature", *(["spread"] if spreads else []), "level",
                     "hits", "FA", "d′ [95%]"],
                    [[d["experiment"], d["feature"],
                      *([number(d.get("spread", 0.0))] if spreads else []),
                      f"{number(d['level'])} {SHORT_UNITS.get(d['unit'], d['unit'])}",
                      f"{d['hits']}/{d['n_signal']}", f"{d['false_alarms']}/{d['n_noise']}",
                      _dprime(d)] for d in strongest],
                    "d′ = z(H) − z(F), log-linear corrected; 95% interval from the "
                    "large-sample variance. Every level: visioneval show.", numeric_from=2,
                    text=(5 + spreads,))
    for note in dispersion_notes(metrics) + few_trials_notes(metrics):
        line(console, note)
    for reason in threshold_reasons(metrics):
        line(console, f"not reached: {reason}")
    line(console, f"{metrics['n']} answered, {metrics['n_errors']} failed requests, "
                  f"{metrics['n_unparsed']} unparsed")


def _thresholds(metrics: dict[str, Any], title: str, console: Console, trials: bool) -> None:
    """The thresholds table: per feature (and set size, spread when they vary) the threshold
    with its 95% interval, unit, slope, β, lapse, (`trials`: the trials behind it) and
    status; or why there are none."""
    thresholds = metrics.get("thresholds", [])
    if not thresholds:
        line(console, f"{title}: thresholds: {metrics.get('thresholds_unavailable')}")
        return
    several = len({t["set_size"] for t in thresholds}) > 1
    spreads = len({t.get("spread", 0.0) for t in thresholds}) > 1
    print_table(console, f"{title}: thresholds at {metrics['criterion']:g} correct "
                f"({metrics['form']})",
                ["feature", *(["set size"] if several else []),
                 *(["spread"] if spreads else []), "threshold", "95% interval", "unit",
                 "slope at\nthreshold", "β", "lapse", "φ", *(["trials"] if trials else []),
                 "status"],
                [[t["feature"], *([str(t["set_size"])] if several else []),
                  *([number(t.get("spread", 0.0))] if spreads else []),
                  number(t.get("threshold")), span(t.get("threshold_ci95")),
                  SHORT_UNITS.get(t["unit"], t["unit"]), number(t.get("slope"), 2),
                  number(t.get("beta"), 2), number(t.get("lapse"), 2),
                  dispersion(t.get("dispersion")), *([str(t["n_trials"])] if trials else []),
                  t["status"]]
                 for t in thresholds],
                slope_note(metrics["form"]), text=_words(several, spreads, trials))


def _words(several: bool, spreads: bool, trials: bool = False) -> tuple[int, int]:
    """The thresholds table's text columns after the first: the unit and the status."""
    unit = 3 + several + spreads
    return (unit, unit + 5 + trials)


def highest_levels(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per yes/no experiment, feature and set size: its row at the highest level where d′
    was measured (else its highest level's, which says why there is none); of the
    distractor spreads (heterogeneity) the widest, to set beside the presence arrays' d′
    at no spread."""
    widest: dict[tuple[Any, ...], float] = {}
    for d in found:
        key = (d["experiment"], d["feature"], d["set_size"])
        widest[key] = max(widest.get(key, 0.0), d.get("spread", 0.0))
    best: dict[tuple[Any, ...], dict[str, Any]] = {}
    for d in found:
        key = (d["experiment"], d["feature"], d["set_size"])
        if d.get("spread", 0.0) != widest[key]:
            continue
        held = best.get(key)
        if held is None or ("dprime" in d, d["level"]) > ("dprime" in held, held["level"]):
            best[key] = d
    return list(best.values())


def _dprime(d: dict[str, Any]) -> str:
    if "dprime" not in d:
        return d.get("reason", "-")
    return f"{fixed(d['dprime'])} [{fixed(d['dprime_ci95'][0])}, {fixed(d['dprime_ci95'][1])}]"


def show(metrics: dict[str, Any], title: str, console: Console) -> None:
    """Every table (`visioneval show`): the thresholds, a d′ table per yes/no experiment
    with every level, the set-size effects and feature against conjunction search, then
    what was not reached and why."""
    _thresholds(metrics, title, console, trials=True)
    found = metrics.get("detection_theory", [])
    several = len({d["set_size"] for d in found}) > 1
    for experiment in dict.fromkeys(d["experiment"] for d in found):
        rows = [d for d in found if d["experiment"] == experiment]
        spreads = len({d.get("spread", 0.0) for d in rows}) > 1
        console.print()
        print_table(console, f"{title}: {experiment} (yes/no): d′ and c",
                    ["feature", *(["set size"] if several else []),
                     *(["spread"] if spreads else []), "level", "hits", "FA", "d′ [95%]",
                     "c"],
                    [[d["feature"], *([str(d["set_size"])] if several else []),
                      *([number(d.get("spread", 0.0))] if spreads else []),
                      f"{number(d['level'])} {SHORT_UNITS.get(d['unit'], d['unit'])}",
                      f"{d['hits']}/{d['n_signal']}", f"{d['false_alarms']}/{d['n_noise']}",
                      _dprime(d), fixed(d.get("c"))] for d in rows])
    sizes = metrics.get("set_size", [])
    if sizes:
        console.print()
        print_table(console, f"{title}: set size (proportion correct per doubling)",
                    ["experiment", "feature", "set sizes", "points/doubling", "95% interval"],
                    [[s["experiment"], s["feature"], ",".join(map(str, s["set_sizes"])),
                      f"{100 * s['points_per_doubling']:+.1f}",
                      span([100 * v for v in s["points_ci95"]])] for s in sizes])
    diffs = metrics.get("conjunction_vs_feature", [])
    if diffs:
        console.print()
        print_table(console, f"{title}: feature against conjunction search",
                    ["set size", "feature condition", "feature", "conjunction",
                     "difference [95%]", "p (Fisher)"],
                    [[str(c["set_size"]), c["feature_condition"], fixed(c["feature"]),
                      fixed(c["conjunction"]),
                      f"{fixed(c['difference'])} [{fixed(c['difference_ci95'][0])}, "
                      f"{fixed(c['difference_ci95'][1])}]", f"{c['p_value']:.3g}"]
                     for c in diffs], numeric_from=2)
    console.print()
    for note in dispersion_notes(metrics) + few_trials_notes(metrics):
        line(console, note)
    for reason in threshold_reasons(metrics):
        line(console, f"not reached: {reason}")
    line(console, f"{metrics['n']} answered, {metrics['n_errors']} failed requests, "
                  f"{metrics['n_unparsed']} unparsed")
