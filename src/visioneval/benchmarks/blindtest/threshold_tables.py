"""BlindTest's thresholds shown: the terminal's table (within 100 columns) and the report's
section, one psychometric chart per magnitude with each protocol's points, fitted ψ and
threshold (typed chart data, `core.figures`; the page draws it)."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console

from visioneval.benchmarks.blindtest.magnitude import MAGNITUDES, Magnitude
from visioneval.benchmarks.blindtest.spec import PROTOCOLS
from visioneval.core.blocks import Charts, Items, Note, Section, Table
from visioneval.core.figures import (
    Axis,
    LevelPoint,
    Psychometric,
    PsychometricSeries,
    SigmoidFit,
    Tick,
)
from visioneval.core.printed import print_table

NAMES = {"paper": "paper", "lmms-eval": "lmms-eval", "vlmevalkit": "VLMEvalKit"}
HEADER = ["Magnitude", "Protocol", "Threshold [95%]", "Levels", "Rows"]
NOTE = ("Threshold: the level where a Weibull ψ(x) = γ + (1 − γ − λ)·F(x) fitted to "
        "proportion correct reaches 0.75 (γ = 0.5 for the circles' yes/no, 1/3 for 0-2 "
        "intersections; λ within [0, 0.1]); [95%]: parametric bootstrap, 1000 refits "
        "(below, beyond: an end outside the tested levels). Not reached: no number, see why below.")


def _blocks(metrics: dict[str, Any], labels: str) -> list[tuple[Magnitude, str, dict]]:
    out = []
    for magnitude in MAGNITUDES:
        for protocol in PROTOCOLS:
            block = (((metrics.get(protocol) or {}).get(labels) or {}).get("thresholds")
                     or {}).get(magnitude.name)
            if isinstance(block, dict):
                out.append((magnitude, protocol, block))
    return out


def number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def _end(value: float | None, open_side: str) -> str:
    """An interval end, or where it lies when open: below or beyond the tested levels."""
    return open_side if value is None else number(value)


def reading(block: dict[str, Any]) -> str:
    """The threshold and its interval with the unit, or "not reached"."""
    if block.get("threshold") is None:
        return "not reached"
    ci = block.get("threshold_ci95")
    said = f"{number(block['threshold'])} {block['unit']}"
    if ci:
        said += f" [{_end(ci[0], 'below')}, {_end(ci[1], 'beyond')}]"
    return said


def rows(metrics: dict[str, Any], labels: str) -> list[list[str]]:
    return [[m.title, NAMES[p], reading(b), str(b.get("n_levels", 0)),
             str(b.get("n_trials", 0))] for m, p, b in _blocks(metrics, labels)]


def reasons(metrics: dict[str, Any], labels: str) -> list[str]:
    return [f"{m.title} ({NAMES[p]}): {b['reason']}" for m, p, b in _blocks(metrics, labels)
            if b.get("threshold") is None and b.get("reason")]


def show(metrics: dict[str, Any], labels: str, console: Console) -> None:
    found = rows(metrics, labels)
    if not found:
        return
    print_table(console, f"Thresholds at 0.75 correct ({labels} labels)", HEADER, found,
                note=NOTE)
    for reason in reasons(metrics, labels):
        console.print(f"not reached: {reason}", style="dim")


def section(metrics: dict[str, Any], labels: str) -> Section | None:
    found = rows(metrics, labels)
    if not found:
        return None
    charts = [chart(m, [(p, b) for mm, p, b in _blocks(metrics, labels) if mm is m])
              for m in MAGNITUDES]
    blocks: list[Any] = [Table(HEADER, found, numeric_from=2),
                         Charts([c for c in charts if c is not None]), Note(NOTE)]
    why = reasons(metrics, labels)
    if why:
        blocks.append(Items([f"not reached: {r}" for r in why]))
    return Section("Thresholds", blocks)


def chart(magnitude: Magnitude, fits: list[tuple[str, dict[str, Any]]]
          ) -> Psychometric | None:
    """Proportion correct against the level on a log axis, per protocol, with its ψ."""
    levels = [p["level"] for _, b in fits for p in b.get("points", [])]
    if not levels:
        return None
    low, high = min(levels) / 1.5, max(levels) * 1.5
    return Psychometric(magnitude.title, Axis(f"{magnitude.unit} (log scale)", low, high,
                                              _ticks(low, high), "log10"),
                        magnitude.unit, magnitude.guess,
                        [_series(NAMES[p], b) for p, b in fits])


def _series(name: str, block: dict[str, Any]) -> PsychometricSeries:
    curve = None if block.get("alpha") is None or block.get("threshold") is None else \
        SigmoidFit(block["alpha"], block["beta"], block["guess"], block.get("lapse", 0.0),
                   "weibull")
    ci = block.get("threshold_ci95")
    band = (ci[0], ci[1]) if ci else None
    interval = "" if not ci else f"{_end(ci[0], 'below')} to {_end(ci[1], 'beyond')}"
    return PsychometricSeries(
        [LevelPoint(p["level"], p["p"], (p["ci95"][0], p["ci95"][1]), p["correct"], p["n"])
         for p in block.get("points", [])], curve, block["criterion"], block.get("threshold"),
        band, interval, f"{name}: {reading(block)}", name)


def _ticks(low: float, high: float) -> list[Tick]:
    """1, 2 and 5 times the powers of ten between `low` and `high`."""
    out = []
    for exponent in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1):
        for m in (1, 2, 5):
            v = m * 10.0 ** exponent
            if low <= v <= high:
                out.append(Tick(v, f"{v:g}"))
    return out
