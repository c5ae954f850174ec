"""The tables a paradigm's run shows (terminal, curves.csv, report): one row per curve
(a threshold, or a PSE and JND, or an estimate's midmean log2 error, with their 95%
intervals and the figures in the condition's other units), the paradigm-level summaries
and the published human values, as rows of text, one source for all three."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from visioneval.core.printed import print_table
from visioneval.terminal import line

if TYPE_CHECKING:
    from rich.console import Console

CHOICE_HEADER = ["condition", "threshold", "95% interval", "beta", "lapse", "dispersion",
                 "trials", "status"]
COMPARISON_HEADER = ["condition", "PSE", "95% interval", "JND", "95% interval", "lapse",
                     "trials", "status"]
OWN_HEADER = ["condition", "{name}", "95% interval", "threshold", "lapse", "dispersion",
              "trials", "status"]
ESTIMATE_HEADER = ["condition", "log2 error", "95% interval", "rank", "people",
                   "in range", "unparsed", "out of range"]
SUMMARY_HEADER = ["figure", "value", "95% interval"]
HUMAN_HEADER = ["quantity", "people", "measured under", "source"]


TINY = 1e-6  # below this a figure is a bootstrap draw's rounding of 0, shown as 0


def number(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "-"
    return "0" if abs(value) < TINY else f"{value + 0.0:.{digits}g}"


def span(found: Sequence[float | None] | None, digits: int = 3) -> str:
    """"1.2 to 3.4"; an open end says which side of the tested levels it lies on."""
    if not found:
        return "-"
    low, high = found
    lower = "below the tested levels" if low is None else number(low, digits)
    upper = "beyond the tested levels" if high is None else number(high, digits)
    return f"{lower} to {upper}"


def spread(found: Sequence[float | None] | None, digits: int = 3) -> str:
    """A width's interval (a JND's): an open end is where the tested levels cannot tell a
    steeper or a shallower curve apart: "up to 0.28", "1.5 or more"."""
    if not found:
        return "-"
    low, high = found
    if low is None:
        return "any" if high is None else f"up to {number(high, digits)}"
    return f"{number(low, digits)} or more" if high is None else \
        f"{number(low, digits)} to {number(high, digits)}"


def other_units(metrics: dict[str, Any]) -> list[str]:
    """Each curve's figure in its condition's other units: "vertical: JND 0.342% of
    segment length (up to 0.465), 0.0801% of image width (up to 0.109)"."""
    figure = "JND" if metrics["kind"] == "comparison" else "threshold"
    out = []
    for c in metrics["curves"]:
        parts = [f"{number(s['value'])} {s['unit']}" + (
            f" ({(spread if figure == 'JND' else span)(s['ci95'])})" if s.get("ci95")
            else "") for s in c.get("scaled", []) if s["name"] == figure]
        if parts:
            out.append(f"{c['condition']}: {figure} " + ", ".join(parts))
    return out


def own_figure(metrics: dict[str, Any]) -> dict[str, Any] | None:
    """The first curve's figure of the paradigm's own model, when it fits its counts itself
    (a Weber fraction); None for the kinds' fits."""
    return next((c["own_figure"] for c in metrics["curves"] if c.get("own_figure")), None)


def with_unit(value: float | None, unit: str) -> str:
    return number(value) + (f" {unit}" if unit and value is not None else "")


def curve_rows(metrics: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The header and one row per curve, for the paradigm's kind (or its own model)."""
    rows = []
    own = own_figure(metrics)
    if own is not None:
        for c in metrics["curves"]:
            figure = c.get("own_figure") or {}
            rows.append([c["condition"], with_unit(figure.get("value"), own["unit"]),
                         spread(figure.get("ci95")), with_unit(c.get("threshold"), c["unit"]),
                         number(c.get("lapse"), 2), number(c.get("dispersion")), str(c["n"]),
                         c["status"]])
        return [h.format(name=own["name"]) for h in OWN_HEADER], rows
    if metrics["kind"] == "estimate":
        for c in metrics["curves"]:
            answered = c["n"] - c["n_unparsed"] - c.get("n_out_of_range", 0)
            rows.append([c["condition"], number(c.get("error")), span(c.get("error_ci95")),
                         rank(c.get("rank")), rank(c.get("published_rank")), str(answered),
                         str(c["n_unparsed"]), str(c.get("n_out_of_range", 0))])
        return ESTIMATE_HEADER, rows
    if metrics["kind"] == "comparison":
        for c in metrics["curves"]:
            unit = f" {c['unit']}" if c.get("pse") is not None else ""
            rows.append([c["condition"], f"{number(c.get('pse'))}{unit}", span(c.get("pse_ci95")),
                         f"{number(c.get('jnd'))}{unit}", spread(c.get("jnd_ci95")),
                         number(c.get("lapse"), 2), str(c["n"]), c["status"]])
        return COMPARISON_HEADER, rows
    for c in metrics["curves"]:
        unit = f" {c['unit']}" if c.get("threshold") is not None else ""
        rows.append([c["condition"], f"{number(c.get('threshold'))}{unit}",
                     span(c.get("threshold_ci95")), number(c.get("beta")),
                     number(c.get("lapse"), 2),
                     number(c.get("dispersion")), str(c["n"]), c["status"]])
    return CHOICE_HEADER, rows


def rank(value: float | None) -> str:
    """A rank, a tie's half kept: "3", "3.5"; "-" for none."""
    return "-" if value is None else f"{value:g}"


def summary_rows(metrics: dict[str, Any]) -> list[list[str]]:
    return [[s["name"], f"{number(s.get('value'))} {s['unit']}".strip()
             if s.get("value") is not None else "-",
             (spread if s.get("width") else span)(s.get("ci95"))
             if s.get("value") is not None else str(s.get("reason") or "-")]
            for s in metrics.get("summaries", [])]


def human_rows(metrics: dict[str, Any]) -> list[list[str]]:
    return [[h["quantity"], h["value"], h["conditions"], h["source"]]
            for h in metrics.get("human", [])]


def reasons(metrics: dict[str, Any]) -> list[str]:
    """Why each curve without a figure has none."""
    return [f"{c['condition']}: not reached: {c['reason']}" for c in metrics["curves"]
            if c.get("reason")]


def fit_note(metrics: dict[str, Any]) -> str:
    own = own_figure(metrics)
    if own is not None:
        criteria = [c["criterion"] for c in metrics["curves"] if c.get("criterion")]
        return (f"{own['about']}. 95% interval: parametric bootstrap; an open end ('up to', "
                "'or more') lies where the tested levels cannot tell a smaller or a larger "
                f"value apart. Threshold: the level where the fit reaches "
                f"{criteria[0] if criteria else 0.75:g} correct.")
    if metrics["kind"] == "estimate":
        order = metrics.get("ranked_by") or "the published order"
        return (f"Error: log2(|judged − true| + 1/8) per answer, averaged as a midmean (the "
                f"mean of the middle 50%; Cleveland & McGill 1984): −3 is exact, 1 about 2 "
                f"points off, 3 about 8. 95% interval: percentile bootstrap, "
                f"{metrics['bootstrap']} resamples of the trials. Rank 1: the lowest error; "
                f"people: the condition's rank in {order}.")
    if metrics["kind"] == "comparison":
        return ("PSE: the level where the share of answers rises through 50% (a cumulative "
                "Gaussian with tied lapses); JND: 0.674σ. 95% intervals: parametric "
                "bootstrap; a PSE's open end lies beyond the tested levels, a JND's where "
                "they cannot tell a steeper or a shallower curve apart.")
    first = next((c for c in metrics["curves"] if c.get("criterion") is not None), None)
    criterion = first["criterion"] if first else 0.75
    guess = first["guess"] if first else 0.5
    bridged = any(c.get("bridged") for c in metrics["curves"])
    simulated = ("parametric bootstrap, counts as dispersed as the fit's lack of fit says "
                 "(beta-binomial where the dispersion is over 1, spread by the t reference)"
                 if metrics.get("dispersion_model") == "fitted" else "parametric bootstrap")
    if bridged:
        simulated += ", widened by bridging (bootstraps from curves near the fit as well)"
    return (f"Threshold: the level where the fitted Weibull ψ reaches {criterion:g} correct "
            f"(guess rate {guess:.3g}, lapse fitted within [0, 0.1]); 95% interval: "
            f"{simulated}; an open end lies beyond the tested levels.")


def show_main(metrics: dict[str, Any], title: str, console: Console) -> None:
    """The tables a run ends with (within 100 columns)."""
    header, rows = curve_rows(metrics)
    print_table(console, f"{title}: {metrics['title']}", header, rows, fit_note(metrics),
                numeric_from=1)
    for found in other_units(metrics):
        line(console, found)
    summaries = summary_rows(metrics)
    if summaries:
        console.print()
        print_table(console, None, SUMMARY_HEADER, summaries, numeric_from=1)
    for reason in reasons(metrics):
        line(console, reason)
    if metrics["kind"] == "estimate":
        line(console, f"{metrics['n']} answered, {metrics['n_errors']} failed requests, "
                      f"{metrics['n_unparsed']} unparsed (no one number), "
                      f"{metrics.get('n_out_of_range', 0)} out of range: in no error.")
        return
    unparsed = ("counted wrong" if metrics["kind"] == "choice" else
                "in no count: they name neither side")
    line(console, f"{metrics['n']} answered, {metrics['n_errors']} failed requests, "
                  f"{metrics['n_unparsed']} unparsed ({unparsed}).")


def show(metrics: dict[str, Any], title: str, console: Console) -> None:
    """Everything: the curves, every level's counts, and the human values."""
    show_main(metrics, title, console)
    for c in metrics["curves"]:
        console.print()
        if metrics["kind"] == "estimate":
            print_table(console, f"{c['condition']}: every level", LEVEL_HEADER,
                        level_rows(c), numeric_from=0)
            continue
        counted = "correct" if metrics["kind"] == "choice" else "positive"
        print_table(console, f"{c['condition']}: every level", ["level", counted, "share",
                                                                  "95% interval", "unparsed"],
                    [[number(p["level"]), f"{p['k']}/{p['n']}", f"{p['p']:.2f}",
                      span(p["ci95"], 2), str(p["n_unparsed"])] for p in c["points"]])
    if metrics.get("human"):
        console.print()
        print_table(console, "People, as published", HUMAN_HEADER, human_rows(metrics),
                    numeric_from=4)


LEVEL_HEADER = ["true", "in range", "median answer", "log2 error", "unparsed",
                "out of range"]


def level_rows(curve: dict[str, Any]) -> list[list[str]]:
    """An estimate's levels: answers in range, their median and midmean error."""
    return [[number(j["level"]), str(j["n"]), number(j.get("median")),
             number(j.get("error")), str(j["n_unparsed"]), str(j["n_out_of_range"])]
            for j in curve.get("judged", [])]


def write_csv(metrics: dict[str, Any], directory: Path) -> Path:
    """curves.csv: one row per curve with every figure."""
    path = Path(directory) / "curves.csv"
    fields = ["condition", "kind", "unit", "status", "threshold", "threshold_low",
              "threshold_high", "pse", "pse_low", "pse_high", "jnd", "jnd_low", "jnd_high",
              "beta", "lapse", "dispersion", "error", "error_low", "error_high", "rank",
              "published_rank", "n", "n_errors", "n_unparsed", "n_out_of_range", "reason",
              "figure", "figure_value", "figure_low", "figure_high"]
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(fields)
        for c in metrics["curves"]:
            row = dict(c)
            for name in ("threshold", "pse", "jnd", "error"):
                ci = c.get(f"{name}_ci95") or (None, None)
                row[f"{name}_low"], row[f"{name}_high"] = ci
            own = c.get("own_figure") or {}
            row["figure"], row["figure_value"] = own.get("name"), own.get("value")
            row["figure_low"], row["figure_high"] = own.get("ci95") or (None, None)
            writer.writerow(["" if row.get(f) is None else row.get(f) for f in fields])
    return path
