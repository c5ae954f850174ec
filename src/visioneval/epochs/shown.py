"""A run's repeated answers in words and one small table: the item means' score beside the
first answers', each epoch's score, the variance split and what more answers or more items
would buy. The terminal and the report page say the same sentences (`lines`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console

from visioneval.core.printed import print_table
from visioneval.epochs.summary import Component, EpochsSummary, Score, VarianceSplit
from visioneval.stats.detection import Z95
from visioneval.stats.variance_split import TARGET_SHARE
from visioneval.terminal import line

SOURCE = "Miller 2024, \"Adding error bars to evals\", section 3"


@dataclass(frozen=True)
class Shown:
    """What the terminal and the page show of epochs.json: a title, the table's rows
    (what, value, 95% interval, n) and the sentences under it."""

    title: str
    header: Sequence[str]
    rows: list[list[str]]
    sentences: list[str]


def _percent(score: Score | None) -> tuple[str, str]:
    if score is None:
        return "-", "no scored answer"
    interval = (f"{100 * score.ci95[0]:.1f} to {100 * score.ci95[1]:.1f}"
                if score.ci95 else score.ci95_unavailable or "-")
    return f"{100 * score.value:.1f}%", interval


def _variance(part: Component) -> tuple[str, str]:
    interval = f"{part.ci95[0]:.4f} to {part.ci95[1]:.4f}" if part.ci95 else "-"
    return f"{part.value:.4f}", interval


def shown(summary: EpochsSummary) -> Shown:
    k = summary.epochs
    rows: list[list[str]] = []
    what = summary.outcome
    value, interval = _percent(summary.item_means)
    n = summary.item_means.n if summary.item_means else 0
    expected = summary.score == "expected"
    if expected:
        label = "expected from log-probabilities" + (f", mean of {k} answers" if k > 1 else "")
    else:
        label = f"item means of {k} answers"
    rows.append([f"{what}, {label}", value, interval, f"{n:,}"])
    value, interval = _percent(summary.first_answers)
    n = summary.first_answers.n if summary.first_answers else 0
    rows.append([f"{what}, first answers" + (" as sampled" if expected else " alone"), value,
                 interval, f"{n:,}"])
    found = summary.split
    if found is not None:
        for name, part in (("between items (variance)", found.between),
                           ("within items (variance)", found.within)):
            value, interval = _variance(part)
            rows.append([name, value, interval, f"{found.items:,}"])
        share = found.within_share
        interval = (f"{100 * share.ci95[0]:.1f} to {100 * share.ci95[1]:.1f}"
                    if share.ci95 else "-")
        rows.append(["answer variation's share", f"{100 * share.value:.1f}%", interval,
                     f"{found.items:,}"])
    clusters = summary.item_means.ci95_clusters if summary.item_means else None
    what_scored = "expected outcomes" if expected else "scored"
    head = "Expected scores" if expected and k == 1 else "Repeated answers"
    title = (f"{head}: {k} answer{'s' * (k > 1)} to each of {summary.items:,} items "
             f"({summary.answers:,} {what_scored}, {summary.errors:,} errors); intervals draw "
             f"whole {clusters + 's' if clusters else 'items'}")
    return Shown(title, ["", "value", "95% interval", "items"], rows, sentences(summary))


def sentences(summary: EpochsSummary) -> list[str]:
    """What the numbers mean, one sentence each."""
    out = []
    if summary.score == "expected":
        out.append(f"expected outcomes: each answer's outcome weighed by the probabilities of "
                   f"its first token's alternatives ({SOURCE}.2): no sampling within an answer")
        for why, count in (summary.expected_unavailable or {}).items():
            out.append(f"{count:,} answers have no expected outcome: {why} (left out)")
    values = [e.value for e in summary.per_epoch]
    if len(values) > 1 and any(v is not None for v in values):
        each = "  ".join("-" if v is None else f"{100 * v:.1f}" for v in values)
        spread = f" (SD {100 * summary.epoch_sd:.1f} points)" \
            if summary.epoch_sd is not None else ""
        out.append(f"each epoch's {summary.outcome}: {each}{spread}")
    found = summary.split
    if found is None:
        if summary.epochs > 1:
            out.append(f"no variance split: {summary.split_unavailable or 'not computed'}")
        return out
    if found.few_items:
        out.append(found.few_items)
    share = min(max(found.within_share.value, 0.0), 1.0)
    out.append(f"Var(score) = (between + within / K) / n ({SOURCE}): answer variation is "
               f"{100 * share:.0f}% of the variance of the item-mean score with K = "
               f"{found.answers_per_item:g}; without it the interval would be "
               f"{100 * (1 - math.sqrt(1 - share)):.0f}% narrower")
    out.append(f"a single pass (one answer per item) moves by about "
               f"±{Z95 * 100 * found.one_pass_sd:.1f} points from answer variation alone, "
               "with the same items and the same model")
    out.append(_cost_sentence(found))
    return out


def _cost_sentence(found: VarianceSplit) -> str:
    """Miller's cost argument: with every answer priced alike, an item and an answer cost
    the same, and Var(score) falls as 1/n with items but only to between/n with answers."""
    tenth = f"{100 * TARGET_SHARE:.0f}%"
    interval = found.between.ci95
    if found.answers_for_tenth is None or (interval is not None and interval[0] <= 0):
        return ("the items' differences are not told apart from answer variation (the "
                "between-item variance's interval reaches 0): more answers per item narrow the "
                "interval about as much as more items")
    if found.answers_for_tenth is None:
        return ("the items hardly differ (between-item variance at or below 0): more answers "
                "per item narrow the interval; more items only as answers do")
    half = found.half_width_at_that
    width = f" (95% interval ±{100 * half:.1f} points)" if half is not None else ""
    if found.answers_for_tenth <= found.answers_per_item:
        return (f"answer variation is already under {tenth} of the variance: at equal "
                "spend, more items narrow the interval, more answers per item barely do")
    return (f"at equal spend (every answer priced alike) more items narrow the interval "
            f"faster than more answers per item; with these items, K = "
            f"{found.answers_for_tenth} answers each would leave answer variation under "
            f"{tenth}{width}")


def show(summary: EpochsSummary, console: Console) -> None:
    """The table and its sentences, within 100 columns."""
    found = shown(summary)
    print_table(console, found.title, found.header, found.rows, text=(2,))
    for sentence in found.sentences:
        line(console, sentence)
