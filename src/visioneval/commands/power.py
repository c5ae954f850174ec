"""`visioneval power`: the smallest accuracy difference a planned run detects, or the samples a
target difference needs, for two models on the same samples (McNemar's test) or on
independent samples. Pilot runs supply the baseline accuracy (one run) and the discordance
(two runs on the same samples, paired by sample id). Formulas: `stats/power.py`."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
from rich.console import Console
from rich.table import Table

from visioneval.commands.common import consoles, guarded
from visioneval.core.capabilities import PairsRecords
from visioneval.core.records import Record
from visioneval.core.rundir import OpenedRun, load_all
from visioneval.stats import power as formulas
from visioneval.stats.paired import PairedCollector, PairedRow

Design = Literal["paired", "unpaired"]
ASSUMED = ("* discordance assumed 2 p (1 - p), as if the two models' errors were independent: "
           "an upper bound when they find the same samples hard, as models usually do; two "
           "pilot runs on the same samples measure it")
EXACT_UP_TO = 50_000  # the exact test's power sums n binomial terms (0.5 s at 100,000)


@dataclass(frozen=True)
class Question:
    """The command's flags: exactly one of `n` and `difference` (without pilot runs); shares,
    not points (0.05 is 5 points)."""

    n: int | None = None
    difference: float | None = None
    alpha: float = formulas.ALPHA
    power: float = formulas.POWER
    baseline: float | None = None
    discordance: float | None = None
    unpaired: bool = False
    metric: str | None = None


DiscordanceFrom = Literal["given", "pilot runs", "assumed"]  # assumed: of independent errors


@dataclass(frozen=True)
class Answer:
    """One metric's figures. `solved` names what was computed: the detectable `difference`
    at `n`, or the `n` a target `difference` needs (per model; the same samples for both in
    the paired design). A figure that cannot be had is None and `note` says why."""

    metric: str
    design: Design
    solved: Literal["difference", "n"]
    n: int | None
    difference: float | None
    baseline: float | None
    discordance: float | None
    discordance_from: DiscordanceFrom | None  # None: unpaired (no discordance)
    pilot_n: int | None = None
    exact_power: float | None = None  # McNemar's exact test at (n, difference), paired only
    note: str = ""


@dataclass(frozen=True)
class Proportion:
    """A pilot run's 0/1 metric: its scored samples and their accuracy."""

    metric: str
    n: int
    accuracy: float


# -- reading pilot runs -----------------------------------------------------------------------


def _outcome_reader(view: OpenedRun) -> Callable[[Record], dict[str, PairedRow]] | None:
    """Per record, the run's 0/1 outcomes by metric: the rows `visioneval compare`'s McNemar
    tests pair (the benchmark's `paired_rows`, by the trust rule), else the headline
    proportion the benchmark itself reads per record (`Benchmark.headline_outcome`, as
    `--target-ci` does: vqa's scorer accuracy, the default summary's accuracy). None: no
    proportion."""
    definition = view.shown
    if isinstance(definition, PairsRecords):
        def pairs(record: Record) -> dict[str, PairedRow]:
            # A pooled metric's answers share images: the formulas here take independent
            # samples, so it is left out (its tasks are there one by one).
            return {key: row for key, row in definition.paired_rows(record).items()
                    if row.kind == "correct" and not row.pooled}
        return pairs
    if view.untrusted:  # shown with the generic definition: it reads no outcome of its own
        return None
    try:
        benchmark = definition.build_to_read(dict(view.info.options))
    except (ValueError, OSError) as exc:
        raise ValueError(f"{view.directory}: {view.benchmark} cannot be rebuilt from "
                         f"run.json to read its outcomes ({exc})") from None
    name = benchmark.headline_proportion()
    if name is None:
        return None

    def headline(record: Record) -> dict[str, PairedRow]:
        value = benchmark.headline_outcome(record)
        return {} if value is None else {name: PairedRow("correct", (value,))}
    return headline


def collect(view: OpenedRun) -> PairedCollector:
    """The run's 0/1 outcomes per metric, streamed from its journal (failed requests are left
    out, as the metrics leave them out); a metric with any other value is dropped."""
    read = _outcome_reader(view)
    if read is None:
        raise ValueError(_no_proportion(view))
    collector = PairedCollector()
    for record in view.iter_records():
        if record.ok:
            collector.add(record.id, read(record))
    for key in list(collector.rows):
        values = collector.rows[key].matrix()[:, 0]
        if len(values) == 0 or not ((values == 0) | (values == 1)).all():
            del collector.rows[key], collector.kinds[key]
    if not collector.rows:
        raise ValueError(_no_proportion(view))
    return collector


def _no_proportion(view: OpenedRun) -> str:
    why = f" ({view.untrusted})" if view.untrusted else ""
    return (f"{view.directory}: this {view.benchmark} run's metrics have no main number "
            "that is a share of samples (accuracy, exact match or recall: 0 or 1 per "
            f"sample){why}")


def proportions(collector: PairedCollector) -> list[Proportion]:
    out = []
    for key, rows in collector.rows.items():
        values = rows.matrix()[:, 0]
        out.append(Proportion(key, len(values), float(values.mean())))
    return out


def discordance(first: PairedCollector, second: PairedCollector
                ) -> dict[str, tuple[int, float, float]]:
    """Per metric both runs have: (samples in common, the first run's accuracy on them, the
    share of them where exactly one run is right), paired by sample id."""
    out = {}
    narrowed, _ = first.common(second)
    other, _ = second.common(first)
    for key, rows in narrowed.rows.items():
        if key not in other.rows:
            continue
        ids_a, a = rows.sorted()
        ids_b, b = other.rows[key].sorted()
        if len(ids_a) == 0 or not np.array_equal(ids_a, ids_b):
            continue
        out[key] = (len(ids_a), float(a[:, 0].mean()), float((a[:, 0] != b[:, 0]).mean()))
    return out


# -- the figures ------------------------------------------------------------------------------


def check(question: Question, runs: int) -> None:
    """Conflicting or out-of-range flags: one line each (ValueError)."""
    q = question
    if runs > 2:
        raise ValueError(f"give one pilot run (its accuracy is the baseline) or two on the "
                         f"same samples (their discordance), not {runs}")
    if q.n is not None and q.difference is not None:
        raise ValueError("give --n or --difference, not both: power finds the other")
    if q.n is None and q.difference is None and runs == 0:
        raise ValueError("give --n N (the detectable difference at N samples) or "
                         "--difference D (the samples D needs), or a pilot run directory")
    if q.unpaired and q.discordance is not None:
        raise ValueError("--discordance is for the paired design; --unpaired has none")
    if runs and q.baseline is not None:
        raise ValueError("--baseline conflicts with a pilot run: its accuracy is the baseline")
    if runs == 2 and q.discordance is not None:
        raise ValueError("--discordance conflicts with two pilot runs: they measure it")
    if q.metric is not None and runs == 0:
        raise ValueError("--metric names a pilot run's metric; give a run directory")
    for name, value, low, high in (("--alpha", q.alpha, 0, 1), ("--power", q.power, 0, 1),
                                   ("--difference", q.difference, 0, 1),
                                   ("--discordance", q.discordance, 0, 1)):
        if value is not None and not low < value < high and not (
                name == "--discordance" and value == 1):
            raise ValueError(f"{name} {value:g} must be between {low} and {high} "
                             "(a share: 0.05 is 5 points)")
    if q.baseline is not None and not 0 <= q.baseline <= 1:
        raise ValueError(f"--baseline {q.baseline:g} must be between 0 and 1 (an accuracy "
                         "as a share: 0.7 is 70%)")
    if q.n is not None and q.n < 1:
        raise ValueError(f"--n {q.n} must be at least 1")


def answer(question: Question, metric: str, baseline: float | None,
           discordance: float | None, discordance_from: DiscordanceFrom,
           pilot_n: int | None = None) -> Answer:
    """One metric's detectable difference at n, or the n a difference needs."""
    q = question
    design: Design = "unpaired" if q.unpaired else "paired"
    if design == "paired" and discordance is None:
        if baseline is None:
            raise ValueError("the paired design needs --discordance R (the share of samples "
                             "where the two models differ) or --baseline P0 (then the "
                             "discordance of independent errors, 2 P0 (1 - P0), is assumed)")
        discordance = formulas.independent_discordance(baseline)
        discordance_from = "assumed"
    if design == "unpaired" and baseline is None:
        raise ValueError("--unpaired needs --baseline P0 (the accuracy you expect) or a "
                         "pilot run directory")
    n = q.n if q.n is not None else (pilot_n if q.difference is None else None)
    base = Answer(metric=metric, design=design, solved="difference", n=n, difference=None,
                  baseline=baseline,
                  discordance=discordance if design == "paired" else None,
                  discordance_from=discordance_from if design == "paired" else None,
                  pilot_n=pilot_n)
    if n is not None:
        found = _detectable(design, n, baseline, discordance, q)
        note = ""
        if found is None:
            note = f"no difference is detected at n = {n} with power {q.power:g}"
        return _with_exact(replace(base, difference=found, note=note), q)
    assert q.difference is not None
    needed, why = _needed(design, q.difference, baseline, discordance, q)
    return _with_exact(replace(base, solved="n", n=needed, difference=q.difference, note=why),
                       q)


def _with_exact(found: Answer, q: Question) -> Answer:
    """The exact test's power at the answer's figures (`visioneval compare` reports McNemar's
    exact test, whose power at small n is below the normal approximation's), and a note when
    the difference fits the baseline in neither direction."""
    if found.design != "paired" or found.n is None or found.difference is None or \
            found.discordance is None:
        return found
    n, d, psi, p0 = found.n, found.difference, found.discordance, found.baseline
    if p0 is not None and not found.note:
        why = formulas.feasible(p0, d, psi)
        if why is not None:
            found = replace(found, note=why)
    if n > EXACT_UP_TO:
        return found
    return replace(found, exact_power=formulas.power_paired_exact(n, d, psi, q.alpha))


def _detectable(design: Design, n: int, baseline: float | None, psi: float | None,
                q: Question) -> float | None:
    if design == "paired":
        assert psi is not None
        return formulas.detectable_paired(n, psi, q.alpha, q.power)
    assert baseline is not None
    found = formulas.detectable_unpaired(n, baseline, q.alpha, q.power)
    return None if found is None else found[0]


def _needed(design: Design, d: float, baseline: float | None, psi: float | None,
            q: Question) -> tuple[int | None, str]:
    """(samples per model, why none) for a target difference: the harder of a rise and a
    fall where both fit (unpaired), or Connor's n (paired; the baseline only bounds it)."""
    if design == "paired":
        assert psi is not None
        if d >= psi:
            return None, (f"a difference of {100 * d:.1f} points cannot arise with a "
                          f"discordance of {psi:.3f} (it is at most the discordance)")
        return math.ceil(formulas.n_paired(d, psi, q.alpha, q.power)), ""
    assert baseline is not None
    sizes = [formulas.n_unpaired(s * d, baseline, q.alpha, q.power)
             for s in (1, -1) if 0 <= baseline + s * d <= 1]
    if not sizes:
        return None, f"a change of {100 * d:.1f} points does not fit a baseline of " \
            f"{100 * baseline:.1f}%"
    return math.ceil(max(sizes)), ""


def answers(question: Question, directories: Sequence[Path]) -> list[Answer]:
    """The figures for the flags and the pilot runs (none, one or two)."""
    check(question, len(directories))
    if not directories:
        return [answer(question, "accuracy", question.baseline, question.discordance,
                       "given")]
    views = load_all(directories)
    pilots = [collect(view) for view in views]
    source: DiscordanceFrom
    if len(views) == 1:
        found = {p.metric: (p.n, p.accuracy, question.discordance)
                 for p in proportions(pilots[0])}
        source = "given"
    else:
        found = {key: (n, accuracy, psi) for key, (n, accuracy, psi)
                 in discordance(pilots[0], pilots[1]).items()}
        source = "pilot runs"
        if not found:
            raise ValueError(f"{views[0].directory} and {views[1].directory} have no "
                             "proportion metric scored on the same samples (pair runs of "
                             "one benchmark over the same data)")
    if question.metric is not None:
        if question.metric not in found:
            raise ValueError(f"--metric {question.metric!r}: the pilot runs have "
                             + ", ".join(repr(k) for k in found))
        found = {question.metric: found[question.metric]}
    return [answer(question, key, accuracy, psi, source, pilot_n=n)
            for key, (n, accuracy, psi) in found.items()]


# -- output -----------------------------------------------------------------------------------


def show(found: list[Answer], question: Question, console: Console) -> None:
    """The table (fits 80 columns), then each note once."""
    design = found[0].design
    solved = found[0].solved
    test = "paired: McNemar's test (Connor 1987)" if design == "paired" else \
        "unpaired: two-proportion z-test (Fleiss, Levin & Paik 2003)"
    console.print(f"{test}; alpha {question.alpha:g} two-sided, power {question.power:g}",
                  highlight=False, markup=False)
    table = Table()
    table.add_column("metric", overflow="fold", max_width=28)
    table.add_column("baseline", justify="right")
    if design == "paired":
        table.add_column("discordance", justify="right")
    if solved == "difference":
        table.add_column("n", justify="right")
        table.add_column("detectable", justify="right")
    else:
        table.add_column("difference", justify="right")
        table.add_column("n needed", justify="right")
    for a in found:
        cells = [a.metric, "-" if a.baseline is None else f"{100 * a.baseline:.1f}%"]
        if design == "paired":
            mark = " *" if a.discordance_from == "assumed" else ""
            cells.append("-" if a.discordance is None else f"{a.discordance:.3f}{mark}")
        points = "-" if a.difference is None else f"±{100 * a.difference:.1f} pts"
        count = "-" if a.n is None else f"{a.n:,}"
        cells += [count, points] if solved == "difference" else [points, count]
        table.add_row(*cells)
    console.print(table)
    per_model = "samples per model" if design == "unpaired" else "samples (the same for both)"
    console.print(f"n: {per_model}; pts: accuracy points.", highlight=False)
    if any(a.discordance_from == "assumed" for a in found):
        console.print(ASSUMED, highlight=False, markup=False)
    exact = [a.exact_power for a in found if a.exact_power is not None]
    if exact and min(exact) < question.power - 0.005:
        low, high = min(exact), max(exact)
        span = f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f} to {high:.2f}"
        console.print(f"McNemar's exact test, which `visioneval compare` reports, has power "
                      f"{span} at these figures (it is conservative at small n).",
                      highlight=False, markup=False)
    for a in found:
        if a.note:
            console.print(f"{a.metric}: {a.note}", highlight=False, markup=False)


def as_json(found: list[Answer], question: Question) -> str:
    payload: dict[str, Any] = {"alpha": question.alpha, "power": question.power,
                               "two_sided": True, "results": [asdict(a) for a in found]}
    return json.dumps(payload, indent=2)


def power(run_dirs: Sequence[Path], *, n: int | None, difference: float | None, alpha: float,
          power_wanted: float, baseline: float | None, discordance: float | None,
          unpaired: bool, metric: str | None, json_out: bool) -> int:
    """`visioneval power`: the flags as a `Question`, its answers printed (or as JSON);
    exit 0, or 2 with one line."""
    console, err = consoles()

    def action() -> int:
        question = Question(n=n, difference=difference, alpha=alpha, power=power_wanted,
                            baseline=baseline, discordance=discordance, unpaired=unpaired,
                            metric=metric)
        return power_command(console, question, run_dirs, json_out)

    return guarded(err, action)


def power_command(console: Console, question: Question, directories: Sequence[Path],
                  json_out: bool) -> int:
    found = answers(question, directories)
    if json_out:
        console.print(as_json(found, question), highlight=False, soft_wrap=True, markup=False)
    else:
        show(found, question, console)
    return 0
