"""metrics.json for NaturalBench, all fractions.

Per label set and protocol (`results`), and per image control (`controls`: --variant blind
or blank), the four figures of `get_scores` ([R] naturalbench_vqa.py:50-149):
- Acc: answers right, over the answers scored;
- Q-Acc: questions right on both images (q0 on i0 and i1; q1 on i0 and i1);
- I-Acc: images with both questions right;
- G-Acc (the paper's main figure): groups with all four answers right.
A right answer is the extracted answer equal to the label: the fixed layout's (Yes/A for
q0_i0 and q1_i1, No/B for the other two; label set "original", what all three
implementations score) or the answer column's (label set "corrected").

The reference code divides by 1,900 groups and asserts that every answer is there; here a
failed request is never a wrong answer: it is counted in `n_errors`, and Q-Acc, I-Acc and
G-Acc are over the questions, images and groups whose answers were all scored
(`incomplete_groups` counts the others). With every answer scored the figures are the
reference code's, number for number.

Intervals resample whole groups (the cluster bootstrap of `stats.bootstrap`): a group's
four answers share its images and questions. `chance` is what independent uniform guesses
score. lmms-eval computes Acc but never reports it (see `ACC_NOT_REPORTED`): its block has
no `acc` and says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from visioneval.benchmarks.naturalbench.spec import (
    CHANCE,
    COUNTS,
    FAMILY,
    ITEM_NAMES,
    METRIC_NAMES,
    METRICS,
    PAPER,
    QUESTION_TYPES,
    score_key,
)
from visioneval.core.gap import LABELS, GapShare, GapUnit, Key
from visioneval.core.records import Record
from visioneval.core.runfiles import Interval, MetricsBlock
from visioneval.core.variant_ids import family_of
from visioneval.harness.differences import Differences, DifferenceSummary
from visioneval.stats.bootstrap import Outcomes, attach, mean_statistic, summaries

if TYPE_CHECKING:
    from visioneval.benchmarks.naturalbench.options import NaturalBenchOptions
    from visioneval.harness.corrections import Corrections

STORED = ""  # the family of records with the stored images
ACC_NOT_REPORTED = ("lmms-eval does not report Acc: process_results returns the key "
                    "naturalbench_Acc (utils.py:176) while the task declares naturalbench_ACC "
                    "(naturalbench.yaml:35), and only declared metrics are aggregated "
                    "(evaluator_utils.py:117)")
LISTED = 20  # group ids listed per kind of layout finding
# Which items make each unit (positions in ITEM_NAMES): a question on both images, an
# image under both questions, the whole group.
UNITS = {"q_acc": ((0, 1), (2, 3)), "i_acc": ((0, 2), (1, 3)), "g_acc": ((0, 1, 2, 3),)}
UNIT_NAMES = {"q_acc": ("q0", "q1"), "i_acc": ("i0", "i1"), "g_acc": ("group",)}


class Slots:
    """One protocol's verdicts under one label set, group by group: four slots each, None
    until that answer is scored; with the answers read and failed requests."""

    __slots__ = ("groups", "errors", "unparsed", "first", "parsed")

    def __init__(self) -> None:
        self.groups: dict[str, list[float | None]] = {}
        self.errors = 0
        self.unparsed = 0
        self.first = 0  # parsed answers that are yes / A
        self.parsed = 0

    def add(self, group: str, position: str, correct: float, answer: str) -> None:
        self.groups.setdefault(group, [None] * 4)[ITEM_NAMES.index(position)] = correct
        if answer:
            self.parsed += 1
            self.first += answer in ("Yes", "A")
        else:
            self.unparsed += 1

    def block(self, types: dict[str, str], intervals: bool = True) -> dict[str, Any]:
        """The four figures (with intervals), their counts, and per question type."""
        out = _figures(self.groups, intervals)
        out["n_errors"] = self.errors
        out["unparsed"] = self.unparsed
        if self.parsed:
            out["first_answer_share"] = self.first / self.parsed
        out["chance"] = dict(CHANCE)
        per_type = {}
        for qtype in QUESTION_TYPES:
            mine = {g: v for g, v in self.groups.items() if types.get(g) == qtype}
            if mine:
                per_type[qtype] = _figures(mine, intervals=False)
        out["per_type"] = per_type
        return out


def _figures(groups: dict[str, list[float | None]], intervals: bool) -> dict[str, Any]:
    """Acc, Q-Acc, I-Acc and G-Acc over the units whose answers are all scored."""
    out: dict[str, Any] = {}
    kept: dict[str, Outcomes] = {m: Outcomes(1) for m in METRICS}
    sums = dict.fromkeys(METRICS, 0.0)
    counts = dict.fromkeys(METRICS, 0)
    incomplete = 0
    for group, slots in groups.items():
        incomplete += any(s is None for s in slots)
        for i, value in enumerate(slots):
            if value is not None:
                sums["acc"] += value
                counts["acc"] += 1
                if intervals:
                    kept["acc"].add(f"{group}/{ITEM_NAMES[i]}", (value,), group)
        for metric, units in UNITS.items():
            for unit, name in zip(units, UNIT_NAMES[metric], strict=True):
                right = whole(slots, unit)
                if right is None:
                    continue
                sums[metric] += right
                counts[metric] += 1
                if intervals:
                    kept[metric].add(f"{group}/{name}", (right,), group)
    for metric in METRICS:
        out[COUNTS[metric]] = counts[metric]
        if not counts[metric]:
            out[f"{metric}_unavailable"] = (f"no {COUNTS[metric].removeprefix('n_')} with "
                                            "every answer scored")
            continue
        out[metric] = sums[metric] / counts[metric]
        if intervals:
            found = kept[metric]
            attach(out, summaries(found.matrix(), mean_statistic, (metric,),
                                  found.clusters("group")))
    out["incomplete_groups"] = incomplete
    return out


def whole(slots: Sequence[float | None], unit: Sequence[int]) -> float | None:
    """1.0 when every answer of the unit (positions in ITEM_NAMES) is right, 0.0 when one is
    wrong; None when one is not scored (the unit is left out, never counted wrong)."""
    values = [slots[i] for i in unit]
    if any(v is None for v in values):
        return None
    return float(all(v == 1.0 for v in values))


def add_verdicts(record: Record, group: str, position: str, protocols: Sequence[str],
                 label_sets: Sequence[str], slots: dict[tuple[str, str], Slots]) -> None:
    """The record's verdict under each protocol that sends its prompt and each label set,
    in `slots[protocol, label_set]`: a failed request counted as an error, an answer column
    that reads as neither answer (no score) left empty."""
    sending = [p for p in protocols if FAMILY[p] == record.metadata.get("family")]
    for label_set in label_sets:
        for protocol in sending:
            key = score_key(protocol, label_set)
            tally = slots.setdefault((protocol, label_set), Slots())
            if not record.ok:
                tally.errors += 1
            elif key in record.scores:
                tally.add(group, position, float(record.scores[key]["correct"]),
                          str(record.parsed.get(key, "")))


def _located(record: Record) -> tuple[str, str] | None:
    """The record's group and position in it; None for a record of neither."""
    group, position = record.metadata.get("group_id"), record.metadata.get("position")
    if not isinstance(group, str) or position not in ITEM_NAMES:
        return None
    return group, str(position)


def group_units(records: Iterable[Record], protocols: Sequence[str],
                label_sets: Sequence[str]) -> Iterator[GapUnit]:
    """Each group's part of G-Acc under every protocol and label set, the group its own
    cluster, as the G-Acc interval draws them (`visioneval explain`). A group is in a
    protocol's G-Acc only when its four answers were scored there (`_figures`): a group with
    a failed request is left out of that headline, never counted wrong. The blind and blank
    controls' records are not the stored images' headline (`controls`): left out."""
    slots: dict[tuple[str, str], Slots] = {}
    for record in records:
        located = _located(record)
        if located is not None and family_of(record) is None:
            add_verdicts(record, *located, protocols, label_sets, slots)
    keys: list[Key] = [(p, s) for p in protocols for s in LABELS if (p, s) in slots]
    (unit,) = UNITS["g_acc"]
    for group in sorted(set().union(*(tally.groups for tally in slots.values()))):
        shares: dict[Key, GapShare] = {}
        for key in keys:
            found = slots[key].groups.get(group)
            right = None if found is None else whole(found, unit)
            if right is not None:
                shares[key] = GapShare("all", right, 1.0)
        if shares:
            yield GapUnit(f"group {group}", shares)


class Layout:
    """Each group's answer columns against the fixed layout (read once per group)."""

    def __init__(self) -> None:
        self.kinds: dict[str, str] = {}

    def add(self, record: Record) -> None:
        group, kind = record.metadata.get("group_id"), record.metadata.get("layout")
        if isinstance(group, str) and isinstance(kind, str):
            self.kinds.setdefault(group, kind)

    def block(self) -> dict[str, Any]:
        found = {"fixed": 0, "breaks": 0, "unreadable": 0}
        listed: dict[str, list[str]] = {"breaks": [], "unreadable": []}
        for group in sorted(self.kinds):
            kind = self.kinds[group]
            found[kind] = found.get(kind, 0) + 1
            if kind in listed and len(listed[kind]) < LISTED:
                listed[kind].append(group)
        return {"groups": len(self.kinds), **found, "breaking_groups": listed["breaks"],
                "unreadable_groups": listed["unreadable"]}


def summarize(records: Iterable[Record], options: NaturalBenchOptions,
              corrections: Corrections) -> dict[str, Any]:
    """metrics.json from the records alone (the newest record per sample), in one pass."""
    protocols, label_sets = options.protocols, options.label_sets
    slots: dict[str, dict[tuple[str, str], Slots]] = {}  # by family
    types: dict[str, str] = {}
    layout = Layout()
    differences = _differences(protocols, label_sets)
    for record in records:
        family = family_of(record) or STORED
        located = _located(record)
        if located is None:
            continue
        types[located[0]] = str(record.metadata.get("type"))
        if family == STORED:
            layout.add(record)
            if differences is not None:
                differences.add(record)
        add_verdicts(record, *located, protocols, label_sets, slots.setdefault(family, {}))
    out: dict[str, Any] = {"protocols": list(protocols), "label_sets": list(label_sets)}
    out["results"] = _blocks(slots, STORED, protocols, label_sets, types)
    controls = sorted(f for f, by in slots.items() if by and f != STORED)
    if controls:
        out["controls"] = {c: _blocks(slots, c, protocols, label_sets, types)
                           for c in controls}
    if len(label_sets) == 2:
        out["label_set_difference"] = _label_set_difference(out["results"])
    out["layout"] = layout.block()
    out["corrections"] = {"version": corrections.version,
                          "listed": len(corrections.corrections)}
    if differences is not None:
        differences.finish()
        summary = differences.summary()
        _notes(summary, out["results"][label_sets[0]], protocols)
        out["differences"] = summary.model_dump()
    return out


def _blocks(slots: dict[str, dict[tuple[str, str], Slots]], family: str,
            protocols: Sequence[str], label_sets: Sequence[str], types: dict[str, str]
            ) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label_set in label_sets:
        per: dict[str, Any] = {}
        for protocol in protocols:
            tally = slots.get(family, {}).get((protocol, label_set)) or Slots()
            block = tally.block(types)
            if protocol == "lmms-eval":
                _drop_acc(block)
            per[protocol] = block
        out[label_set] = per
    return out


def _drop_acc(block: dict[str, Any]) -> None:
    """lmms-eval's block as lmms-eval reports it: no Acc, and why."""
    for key in [k for k in block if k == "acc" or k.startswith("acc_")]:
        del block[key]
    block["acc_unavailable"] = ACC_NOT_REPORTED
    for inner in block.get("per_type", {}).values():
        inner.pop("acc", None)
        inner.pop("acc_unavailable", None)


def _label_set_difference(results: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each figure under the answer columns minus under the fixed layout."""
    out: dict[str, dict[str, float]] = {}
    for protocol, fixed in results["original"].items():
        columns = results["corrected"].get(protocol, {})
        out[protocol] = {m: columns[m] - fixed[m] for m in METRICS
                         if isinstance(fixed.get(m), float) and isinstance(columns.get(m),
                                                                           float)}
    return out


def _differences(protocols: Sequence[str], label_sets: Sequence[str]) -> Differences | None:
    if PAPER not in protocols or len(protocols) < 2:
        return None
    keys = [score_key(p, label_sets[0]) for p in protocols]
    return Differences(score_key(PAPER, label_sets[0]), keys)


def _notes(summary: DifferenceSummary, results: dict[str, Any],
           protocols: Sequence[str]) -> None:
    """What is not per answer: G-Acc, which the one space moves too, lmms-eval's missing
    Acc, and the harnesses' refusal of an incomplete set of answers."""
    paper = results.get(PAPER, {})
    for protocol in protocols:
        if protocol == PAPER:
            continue
        mine = results.get(protocol, {})
        if isinstance(paper.get("g_acc"), float) and isinstance(mine.get("g_acc"), float):
            points = 100 * (mine["g_acc"] - paper["g_acc"])
            summary.add_note(protocol, "prompt, on G-Acc",
                             f"the space between question and suffix moves G-Acc by "
                             f"{points:+.1f} points ({_groups(mine, paper)})", points)
        if protocol == "lmms-eval":
            summary.add_note(protocol, "aggregation", ACC_NOT_REPORTED)
        groups = mine.get("n_groups", 0)
        if groups != 1900 or mine.get("incomplete_groups"):
            summary.add_note(protocol, "item set", f"{_asserts(protocol)}; this run has "
                             f"{groups} whole groups, which it would not score")


def _groups(mine: dict[str, Any], paper: dict[str, Any]) -> str:
    if mine["n_groups"] == paper["n_groups"]:
        return f"{mine['n_groups']} whole groups"
    return f"{mine['n_groups']} and {paper['n_groups']} whole groups"


def _asserts(protocol: str) -> str:
    where = "utils.py:187" if protocol == "lmms-eval" else "image_mcq.py:1428"
    return f"{protocol} asserts exactly 7,600 answers ({where})"


# -- metrics.json's shape -------------------------------------------------------------------

class Figures(MetricsBlock):
    """Acc, Q-Acc, I-Acc and G-Acc with their counts (intervals on the whole set only)."""

    n_items: int
    n_questions: int
    n_images: int
    n_groups: int
    incomplete_groups: int
    acc: float | None = None
    acc_se: float | None = None
    acc_ci95: Interval | None = None
    acc_ci95_clusters: str | None = None
    acc_ci95_n_clusters: int | None = None
    acc_ci95_unavailable: str | None = None
    acc_unavailable: str | None = None
    q_acc: float | None = None
    q_acc_se: float | None = None
    q_acc_ci95: Interval | None = None
    q_acc_ci95_clusters: str | None = None
    q_acc_ci95_n_clusters: int | None = None
    q_acc_ci95_unavailable: str | None = None
    q_acc_unavailable: str | None = None
    i_acc: float | None = None
    i_acc_se: float | None = None
    i_acc_ci95: Interval | None = None
    i_acc_ci95_clusters: str | None = None
    i_acc_ci95_n_clusters: int | None = None
    i_acc_ci95_unavailable: str | None = None
    i_acc_unavailable: str | None = None
    g_acc: float | None = None
    g_acc_se: float | None = None
    g_acc_ci95: Interval | None = None
    g_acc_ci95_clusters: str | None = None
    g_acc_ci95_n_clusters: int | None = None
    g_acc_ci95_unavailable: str | None = None
    g_acc_unavailable: str | None = None


class ProtocolBlock(Figures):
    """One protocol under one label set: the figures, failed requests, answers that read
    as neither answer, the share of answers that are yes / A, chance, per question type."""

    n_errors: int
    unparsed: int
    first_answer_share: float | None = Field(None, description="Share of read answers that "
                                             "are Yes or A (the answer bias).")
    chance: dict[str, float]
    per_type: dict[str, Figures]


class LayoutBlock(MetricsBlock):
    """The groups' answer columns against the fixed layout the scoring code assumes."""

    groups: int
    fixed: int
    breaks: int
    unreadable: int
    breaking_groups: list[str]
    unreadable_groups: list[str]


class CorrectionsBlock(MetricsBlock):
    """The label corrections manifest the run read (corrections.json)."""

    version: str
    listed: int = Field(description="How many corrections it lists.")


class NaturalBenchMetrics(MetricsBlock):
    """metrics.json of NaturalBench: the four figures per label set and protocol."""

    protocols: list[str] = Field(description="The protocols scored, the paper's first.")
    label_sets: list[str] = Field(description="original (the fixed layout), corrected (the "
                                  "answer columns), or both.")
    results: dict[str, dict[str, ProtocolBlock]] = Field(
        description="label set -> protocol -> its figures, with the stored images.")
    controls: dict[str, dict[str, dict[str, ProtocolBlock]]] | None = Field(
        None, description="blind or blank -> label set -> protocol: the figures without "
        "the image.")
    label_set_difference: dict[str, dict[str, float]] | None = Field(
        None, description="protocol -> figure: answer columns minus fixed layout.")
    layout: LayoutBlock
    corrections: CorrectionsBlock
    differences: DifferenceSummary | None = Field(
        None, description="Why the protocols differ, answer by answer "
        "(visioneval.harness.differences).")


__all__ = ["METRIC_NAMES", "NaturalBenchMetrics", "summarize"]
