"""The judge card as a reader sees it: how each judge was asked, and each check it passed,
failed or left open, in one table per run (terminal, report, `compare`), with the judges'
agreement and the calibration against people. One place, so every view says the same."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from visioneval.core.blocks import Block, Charts, Note, Section, Table
from visioneval.core.figures import Axis, PointGroup, Scatter, Tick
from visioneval.core.view import ReadableRun
from visioneval.evaluators.metrics import (
    TENTATIVE,
    Agreement,
    ControlCheck,
    Difference,
    EvaluatorMetrics,
    JudgeCard,
    JudgesMetrics,
    JudgeVariation,
    ProbeCheck,
    VarianceComponent,
)
from visioneval.terminal import line

TITLE = "Judges"
HEADER = ["check", "evaluator", "verdict", "n", "result [95%]"]
STYLE = {"pass": "green", "flag": "bold red", "inconclusive": "yellow"}
NOTE = (
    "blind: the same request with every image removed (text unchanged); the difference is "
    "the weighted score (0-1) with the images minus without, 95% bootstrap interval over "
    "cases: a judge whose scores do not move is not judging what it sees. order: the images "
    "shown in the other order, each after its own label; the difference is as given minus "
    "swapped. edits: the candidate's output changed by a rule (a count, an absent object, a "
    "missing element, a colour); detected = the score fell and the edit was named in the "
    "detail list the rubric asks for, with a Wilson 95% interval. alpha: Krippendorff's "
    "alpha (interval level) with a bootstrap 95% interval over cases; 0.8 or more reliable, "
    "0.667 to 0.8 tentative, below unreliable (Krippendorff 2004).")


def judges_of(metrics: dict[str, Any]) -> JudgesMetrics | None:
    found = metrics.get("judges")
    return JudgesMetrics.model_validate(found) if found else None


def name(card: JudgeCard, run_model: str) -> str:
    return f"judge {card.judge}: {card.model or run_model}"


def _interval(diff: Difference | None) -> str:
    """"+0.58 [0.54, 0.62]": a difference and its 95% interval."""
    if diff is None:
        return "-"
    if diff.ci95 is None:
        return f"{diff.mean:+.2f}"
    return f"{diff.mean:+.2f} [{diff.ci95[0]:.2f}, {diff.ci95[1]:.2f}]"


@dataclass(frozen=True)
class CheckRow:
    """One check of one judge, as shown."""

    check: str
    evaluator: str
    n: int
    figure: str
    verdict: str  # pass, flag, inconclusive, or "" for a figure without one
    finding: str

    def cells(self) -> list[str]:
        return [self.check, self.evaluator.removeprefix("judge:"), self.finding, str(self.n),
                self.figure]


def _control_row(check: str, found: ControlCheck) -> CheckRow:
    return CheckRow(check, found.evaluator, found.n, _interval(found.score), found.verdict,
                    found.finding)


def _probe_row(found: ProbeCheck) -> CheckRow:
    figure = "-" if found.rate is None or found.ci95 is None else \
        (f"{found.detected}/{found.n} [{100 * found.ci95[0]:.0f}%, "
         f"{100 * found.ci95[1]:.0f}%]")
    return CheckRow(f"edit:{found.kind}", "all", found.n, figure, found.verdict,
                    found.finding)


def _alpha(found: Agreement | None) -> str:
    if found is None:
        return "-"
    if found.alpha is None:
        return found.unavailable or "-"
    ci = f" [{found.ci95[0]:.2f}, {found.ci95[1]:.2f}]" if found.ci95 else ""
    return f"{found.alpha:.2f}{ci}"


def rows(card: JudgeCard) -> list[CheckRow]:
    """Every check on the card, in the order the docs explain them."""
    out = [_control_row("blind", c) for c in card.blind]
    out += [_control_row("order", c) for c in card.order]
    out += [_probe_row(p) for p in card.probes]
    for evaluator, found in card.self_agreement.items():
        own = found.get("score")
        if own is not None:
            out.append(CheckRow("itself", evaluator, own.units,
                                _alpha(own) if own.alpha is not None else "-",
                                "flag" if own.alpha is not None and own.alpha < TENTATIVE
                                else "pass" if own.alpha is not None else "inconclusive",
                                own.reading or "not computed"))
    for human in card.humans:
        if human.dimension != "score":
            continue  # the weighted score speaks for the evaluator; its dimensions: report
        ci = f" [{human.alpha_ci95[0]:.2f}, {human.alpha_ci95[1]:.2f}]" \
            if human.alpha_ci95 else ""
        figure = f"{human.alpha:.2f}{ci}" if human.alpha is not None else "-"
        verdict = "inconclusive" if human.alpha is None else \
            "pass" if human.alpha >= TENTATIVE else "flag"
        reading = "agrees" if verdict == "pass" else "disagrees" if verdict == "flag" \
            else "too few cases" if human.n < 3 else "not computed"
        out.append(CheckRow("people", human.evaluator, human.n, figure, verdict, reading))
    return out


def legend() -> str:
    """What the terminal table's short words mean (the report's note says it at length)."""
    return ("blind, order: the score as asked minus without the images / with them swapped; "
            "edit: detected (score fell and the edit was named) of n; itself, people: "
            "Krippendorff's alpha (0.667 or more agrees); 95% intervals; docs/judge-checks.md")


def about(card: JudgeCard, run_model: str) -> str:
    """How the judge was asked, in one line."""
    seeds = f", seeds {card.seeds[0]}-{card.seeds[-1]}" if card.seeds else ", no seed sent"
    return (f"{name(card, run_model)}; prompt {card.prompt_sha256[:12]}, temperature "
            f"{card.temperature:g}, {card.samples} sample{'s' if card.samples > 1 else ''} "
            f"per case{seeds}, max {card.max_tokens} tokens")


# -- the terminal ------------------------------------------------------------------------------
def print_cards(judges: JudgesMetrics, run_model: str, console: Console) -> None:
    for card in judges.cards:
        console.print()
        console.print(about(card, run_model), highlight=False, markup=False)
        found = rows(card)
        if found:
            table = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
            for column in HEADER:
                table.add_column(column, justify="right" if column == "n" else "left",
                                 no_wrap=column != "evaluator", overflow="ellipsis")
            for row in found:
                table.add_row(*map(escape, row.cells()), style=STYLE.get(row.verdict))
            console.print(table)
        for flag in card.flags:
            line(console, f"  FLAG {flag}", style="red")
    if judges.agreement:
        console.print()
    for text in agreement_lines(judges):
        line(console, text)
    console.print(legend(), style="dim", highlight=False, markup=False)


def agreement_lines(judges: JudgesMetrics) -> list[str]:
    if not judges.agreement:
        return []
    lines = [f"Agreement between the {len(judges.cards)} judges (Krippendorff's alpha on the "
             f"weighted score; panel score: {judges.panel_score}):"]
    for evaluator, found in judges.agreement.items():
        score = found.get("score")
        reading = f" {score.reading}" if score is not None and score.reading else ""
        lines.append(f"  {evaluator}: {_alpha(score)}{reading}"
                     f" over {score.units if score else 0} cases")
    return lines


# -- the judge's call-to-call variation ------------------------------------------------------
VARIATION_NOTE = (
    "A judge asked N times per case (--judge-samples N) gives each case N scores. The "
    "variance of its mean score over the cases is (between + within / N) / cases (Miller "
    "2024, \"Adding error bars to evals\", section 3): between, the variance of the cases' "
    "own scores; within, the variance of one verdict about its case's own score (both in "
    "squared units of the 0-1 score). call-to-call share: (within / N) over their sum, the "
    "part of the uncertainty more samples per case would shrink; samples for < 10%: the "
    "fewest per case that would leave it under a tenth. 95% intervals: bootstrap over "
    "cases, 1000 seeded resamples. docs/judge-checks.md.")


ROUGH_BELOW = 100
"""Cases under which the split's intervals covered clearly less than 95% when simulated
(`measure/judge_variation_recovery.py`: 77-86% at 10 cases, 86-91% at 20, 88-93% at 40;
91-95% at 100)."""
ROUGH_LINE = (f"its intervals are rough: under {ROUGH_BELOW} cases they covered 77-93% "
              "(docs/judge-checks.md)")


def _share(part: VarianceComponent) -> str:
    if part.ci95 is None:
        return f"{100 * part.value:.0f}%"
    return f"{100 * part.value:.0f}% ({100 * part.ci95[0]:.0f}-{100 * part.ci95[1]:.0f}%)"


def _samples(value: float) -> str:
    return f"{value:.0f}" if value == round(value) else f"{value:.1f}"


def _needed(found: JudgeVariation) -> str:
    """What more samples per case would do, in words."""
    goal = f"{100 * found.target_share:.0f}%"
    need = found.samples_for_target
    if need is None:
        return f"no number of samples a case brings it under {goal}: the cases hardly differ"
    if need <= found.samples_per_case:
        return f"{_samples(found.samples_per_case)} samples a case keep it under {goal}"
    return f"{need} samples a case would bring it under {goal}"


def variation_text(who: str, block: EvaluatorMetrics) -> list[str]:
    """One evaluator's split in two lines, or why it was not made in one."""
    found = block.judge_variation
    if found is None:
        reason = block.judge_variation_unavailable or "not computed"
        return [f"{who}: judge call-to-call variation not measured:", f"  {reason}"]
    left = f"; {found.left_out} left out (under two usable verdicts)" if found.left_out else ""
    lines = [f"{who}: judge call-to-call variation: {_share(found.within_share)} of the "
             "variance,",
             f"  over {found.cases} cases x {_samples(found.samples_per_case)} samples; "
             f"{_needed(found)}{left}"]
    if found.cases < ROUGH_BELOW:
        lines.append(f"  {ROUGH_LINE}")
    return lines


def variation_lines(judges: JudgesMetrics, run_model: str) -> list[str]:
    """Every judge evaluator's split, each judge's when there are several; nothing for a
    judge asked once per case."""
    out: list[str] = []
    for found in judges.cards:
        if found.samples < 2:
            continue
        for evaluator, block in found.evaluators.items():
            who = f"{name(found, run_model)}, {evaluator}" if len(judges.cards) > 1 \
                else evaluator
            out += variation_text(who, block)
    return out


def _variance(part: VarianceComponent) -> str:
    if part.ci95 is None:
        return f"{part.value:.4f}"
    return f"{part.value:.4f} [{part.ci95[0]:.4f}, {part.ci95[1]:.4f}]"


def variation_blocks(blocks: Mapping[str, EvaluatorMetrics]) -> list[Block]:
    """The report's table of each judge evaluator's split and what it means (nothing when
    no evaluator has one)."""
    rows = []
    rough = False
    for label, block in blocks.items():
        found = block.judge_variation
        if found is None:
            continue
        rough = rough or found.cases < ROUGH_BELOW
        se = "" if found.mean_score_se is None else f" ± {found.mean_score_se:.3f}"
        need = found.samples_for_target
        rows.append([label, found.cases, _samples(found.samples_per_case),
                     f"{found.mean_score:.3f}{se}", _variance(found.between),
                     _variance(found.within), _share(found.within_share),
                     "-" if need is None else need, found.left_out])
    if not rows:
        return []
    return [Note("The judge's call-to-call variation: how much of the uncertainty of each "
                 "mean score is the cases and how much the judge's own."),
            Table(["evaluator", "cases", "samples a case", "mean score ± s.e.",
                   "between cases [95%]", "within cases [95%]", "call-to-call share",
                   "samples for < 10%", "left out"], rows, numeric_from=1),
            Note(VARIATION_NOTE + (f" {ROUGH_LINE[0].upper()}{ROUGH_LINE[1:]}."
                                   if rough else ""))]


# -- the report --------------------------------------------------------------------------------
def sections(judges: JudgesMetrics, run_model: str) -> list[Section]:
    """"Judges": how each was asked, their pass rates and agreement, what the checks mean;
    then a section per judge with its checks, flags and calibration against people."""
    blocks: list[Block] = [Table(["judge", "how it was asked", "flags"],
                                 [[name(c, run_model), about(c, run_model).split("; ", 1)[1],
                                   len(c.flags)] for c in judges.cards], numeric_from=2)]
    if len(judges.cards) > 1:
        labels = list(dict.fromkeys(e for c in judges.cards for e in c.evaluators))
        blocks.append(Table(["evaluator", *(name(c, run_model) for c in judges.cards)],
                            [[e, *(_rate(c, e) for c in judges.cards)] for e in labels],
                            numeric_from=1))
        blocks.append(Note(f"Each judge's own pass rate and mean score; the Evaluators table "
                           f"gives the panel's ({judges.panel_score} of the judges' scores "
                           "per case)."))
    if judges.agreement:
        table = [[evaluator, dimension, found.units, _alpha(found), found.reading or "-"]
                 for evaluator, by_dim in judges.agreement.items()
                 for dimension, found in by_dim.items()]
        blocks.append(Table(["evaluator", "dimension", "cases", "alpha [95%] between judges",
                             "reading"], table, numeric_from=2))
    unused = judges.human_labels.unused_line() if judges.human_labels else None
    if unused:
        blocks.append(Note(unused))
    blocks.append(Note(NOTE))
    return [Section(TITLE, blocks), *(_judge_section(c, run_model, len(judges.cards) > 1)
                                    for c in judges.cards)]


def _judge_section(card: JudgeCard, run_model: str, several: bool) -> Section:
    blocks: list[Block] = [Note(about(card, run_model))]
    found = rows(card)
    if found:
        blocks.append(Table(HEADER, [r.cells() for r in found], numeric_from=3))
    blocks += [Note(f"FLAG {flag}", "flag") for flag in card.flags]
    if several:  # one judge: the Evaluators section has its split
        blocks += variation_blocks(card.evaluators)
    dims = _dimension_rows(card)
    if dims:
        blocks.append(Table(["check", "evaluator", "dimension", "n", "difference [95%]"],
                            dims, numeric_from=3))
    people = [[h.evaluator, h.dimension, h.n, _fixed(h.alpha), _span(h.alpha_ci95),
               _fixed(h.spearman), _fixed(h.mean_abs_diff), _fixed(h.mean_diff, True)]
              for h in card.humans]
    if people:
        blocks.append(Table(["evaluator", "dimension", "n", "alpha", "alpha 95%", "Spearman",
                             "mean |diff.|", "judge - people"], people, numeric_from=2))
        evaluators = dict.fromkeys(h.evaluator for h in card.humans if h.points)
        blocks.append(Charts([calibration(card, run_model, e) for e in evaluators]))
    return Section(name(card, run_model).capitalize(), blocks)


def _rate(card: JudgeCard, evaluator: str) -> str:
    found = card.evaluators.get(evaluator)
    if found is None or found.pass_rate is None:
        return "-"
    return f"{100 * found.pass_rate:.0f}% ({found.mean_score:.3f})"


def _fixed(value: float | None, signed: bool = False) -> str:
    return "-" if value is None else (f"{value:+.2f}" if signed else f"{value:.2f}")


def _span(found: tuple[float, float] | None) -> str:
    return "-" if found is None else f"[{found[0]:.2f}, {found[1]:.2f}]"


def _dimension_rows(card: JudgeCard) -> list[list[Any]]:
    """Each dimension's difference under the blind and order controls (0-10 points)."""
    out: list[list[Any]] = []
    for check, found in [("blind", c) for c in card.blind] + [("order", c) for c in card.order]:
        for dimension, diff in found.dimensions.items():
            out.append([check, found.evaluator, dimension, diff.n, _interval(diff)])
    return out


def calibration(card: JudgeCard, run_model: str, evaluator: str) -> Scatter:
    """The judge's scores against people's (0-10) on one evaluator: the weighted score and
    each labelled dimension, with the line where they would be equal (points above it are
    scores the judge gave more)."""
    ticks = [Tick(t, f"{t:g}") for t in (0.0, 2.5, 5.0, 7.5, 10.0)]
    return Scatter(f"{name(card, run_model)} against people: "
                   f"{evaluator.removeprefix('judge:')}",
                   Axis("people", 0.0, 10.0, ticks), Axis("judge", 0.0, 10.0, ticks),
                   [PointGroup(h.dimension, [(people, judge) for people, judge in h.points])
                    for h in card.humans if h.points and h.evaluator == evaluator])


# -- compare -----------------------------------------------------------------------------------
def comparison_section(views: Sequence[ReadableRun]) -> Section | None:
    """Every run's judges side by side: how each was asked and what its checks found."""
    table = []
    for view in views:
        judges = judges_of(view.metrics)
        if judges is None:
            continue
        for card in judges.cards:
            found = rows(card)
            flags = sum(r.verdict == "flag" for r in found)
            table.append([view.directory.name, name(card, view.model),
                          card.prompt_sha256[:12], _finding(found, "blind"),
                          _finding(found, "order"), _finding(found, "people"),
                          f"{card.temperature:g}", card.samples, _probes(card), flags])
    if not table:
        return None
    return Section(TITLE, [Table(["run", "judge", "prompt", "blind", "order", "people",
                                  "temp.", "samples", "edits detected", "flags"], table,
                                 numeric_from=6), Note(NOTE)])


def judges_named(view: ReadableRun) -> str:
    """The run's judges in one cell: its model, and the panel's after it."""
    judges = judges_of(view.metrics)
    if judges is None or len(judges.cards) == 1:
        return view.model
    return " + ".join(card.model or view.model for card in judges.cards)


def _finding(found: list[CheckRow], check: str) -> str:
    """A check's findings over the evaluators, failed ones first; the ones that could not
    be told (too few cases) only when nothing else was found."""
    picked = [r for r in found if r.check.startswith(check)]
    told = [r for r in picked if r.verdict in ("flag", "pass")]
    shown = sorted(told, key=lambda r: r.verdict != "flag") if told else picked
    return "; ".join(dict.fromkeys(r.finding for r in shown)) or "-"


def _probes(card: JudgeCard) -> str:
    if not card.probes:
        return "-"
    n = sum(p.n for p in card.probes)
    hit = sum(p.detected for p in card.probes)
    return f"{hit}/{n}" if n else "-"
