"""The tables a psychophysics run shows (terminal, thresholds.csv and dprime.csv, report):
thresholds per feature and d′ per level, as rows of text, one source for all three."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

THRESHOLD_HEADER = ["feature", "set size", "spread", "threshold", "95% interval", "slope", "lapse",
                    "trials", "status"]
DPRIME_HEADER = ["experiment", "feature", "set size", "spread", "level", "hits", "false alarms",
                 "d′ [95%]", "c [95%]"]


def number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def fixed(value: float | None) -> str:
    """Two decimals, without a negative zero."""
    return "-" if value is None else f"{value + 0.0:.2f}".replace("-0.00", "0.00")


def span(found: Sequence[float | None] | None, digits: int = 3) -> str:
    if not found:
        return "-"
    low, high = found
    upper = "beyond the tested levels" if high is None else number(high, digits)
    return f"{number(low, digits)} to {upper}"


def threshold_rows(metrics: dict[str, Any]) -> list[list[str]]:
    rows = []
    for t in metrics.get("thresholds", []):
        reached = t.get("threshold") is not None
        rows.append([t["feature"], str(t["set_size"]), number(t.get("spread", 0.0)),
                     f"{number(t['threshold'])} {t['unit']}" if reached else "-",
                     span(t.get("threshold_ci95")), number(t.get("slope")),
                     number(t.get("lapse"), 2), str(t["n_trials"]), t["status"]])
    return rows


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


def show(metrics: dict[str, Any], title: str, console: Console) -> None:
    """The thresholds table, then a d′ table per yes/no experiment, each within 80 columns
    (set size shown when a run has several; all intervals in thresholds.csv, dprime.csv and
    the report), then what was not reached and why."""
    thresholds = metrics.get("thresholds", [])
    several = len({t["set_size"] for t in thresholds}) > 1
    spreads = len({t.get("spread", 0.0) for t in thresholds}) > 1
    if thresholds:
        _table(console, f"{title}: thresholds at {metrics['criterion']:g} correct "
               f"({metrics['form']})",
               ["feature", *(["set size"] if several else []),
                *(["spread"] if spreads else []), "threshold", "95% interval", "unit",
                "slope", "lapse", "status"],
               [[t["feature"], *([str(t["set_size"])] if several else []),
                 *([number(t.get("spread", 0.0))] if spreads else []),
                 number(t.get("threshold")), span(t.get("threshold_ci95")),
                 SHORT_UNITS.get(t["unit"], t["unit"]), number(t.get("slope"), 2),
                 number(t.get("lapse"), 2), t["status"]] for t in thresholds])
    else:
        console.print(f"{title}: thresholds: {metrics.get('thresholds_unavailable')}")
    found = metrics.get("detection_theory", [])
    several = len({d["set_size"] for d in found}) > 1
    for experiment in dict.fromkeys(d["experiment"] for d in found):
        rows = [d for d in found if d["experiment"] == experiment]
        spreads = len({d.get("spread", 0.0) for d in rows}) > 1
        _table(console, f"{title}: {experiment} (yes/no): d′ and c",
               ["feature", *(["set size"] if several else []),
                *(["spread"] if spreads else []), "level", "hits", "FA", "d′",
                "d′ 95% interval", "c"],
               [[d["feature"], *([str(d["set_size"])] if several else []),
                 *([number(d.get("spread", 0.0))] if spreads else []),
                 f"{number(d['level'])} {SHORT_UNITS.get(d['unit'], d['unit'])}",
                 f"{d['hits']}/{d['n_signal']}", f"{d['false_alarms']}/{d['n_noise']}",
                 fixed(d.get("dprime")),
                 f"{fixed(d['dprime_ci95'][0])} to {fixed(d['dprime_ci95'][1])}"
                 if "dprime_ci95" in d else d.get("reason", "-"), fixed(d.get("c"))]
                for d in rows])
    sizes = metrics.get("set_size", [])
    if sizes:
        _table(console, f"{title}: set size (proportion correct per doubling)",
               ["experiment", "feature", "set sizes", "points/doubling", "95% interval"],
               [[s["experiment"], s["feature"], ",".join(map(str, s["set_sizes"])),
                 f"{100 * s['points_per_doubling']:+.1f}",
                 span([100 * v for v in s["points_ci95"]])] for s in sizes])
    for reason in threshold_reasons(metrics):
        console.print(f"not reached: {reason}")
    console.print(f"{metrics['n']} answered, {metrics['n_errors']} failed requests, "
                  f"{metrics['n_unparsed']} unparsed")


def _table(console: Console, title: str, header: list[str], rows: list[list[str]]) -> None:
    from rich.table import Table

    table = Table(title=title, title_justify="left", pad_edge=False, box=None)
    for i, column in enumerate(header):
        table.add_column(column, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
