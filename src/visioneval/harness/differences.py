"""Why two protocols score the same item differently: the answer to "why is my number not the
paper's?", item by item.

A protocol is a prompt, an answer extraction, a label set and an aggregation. Going from the
paper's protocol (the reference) to another protocol P, this module switches one of them at a
time, in the order of `STEPS`, and charges each item's change of verdict to the step that made
it:

- s0: the paper's reading of the paper's answer (the paper's extraction, the paper's labels);
- s1: the paper's extraction of the paper's answer against P's labels ("label set": s1 - s0);
- s2: P's extraction and labels on the paper's answer ("extraction": s2 - s1);
- s3: P's reading of P's own answer, the reply to P's prompt ("prompt": s3 - s2; zero when P
  sends the paper's prompt, since then it reads the same answer).

The moves of one item add up to s3 - s0, so over the items both protocols score, the points
the causes move add up to P's per-item accuracy minus the paper's. What is not per item is
said beside them: items P leaves out ("item set": how much the paper's own accuracy changes on
P's items) and the benchmark's notes on aggregation (pairs against questions, settings pooled
or apart, macro or micro means).

A benchmark puts the counterfactual readings in the reference protocol's score block
(`reference_block`), on the record whose answer the paper reads, and names the item in
`record.metadata["item"]`; P's own verdict is `scores[P]["correct"]` on the record of the
prompt P sends. `Differences` joins them by item while the journal streams past: an item is
held only until its last record arrives, so memory follows the records in flight, not the run.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table as RichTable

from visioneval.core.blocks import Items, Note, Section, Table
from visioneval.core.records import Record
from visioneval.core.store import write_atomic
from visioneval.io import csvcells
from visioneval.terminal import line

STEPS = ("label set", "extraction", "prompt")
PROMPT_AND_EXTRACTION = "prompt and extraction"  # when the benchmark cannot tell them apart
ITEM_SET = "item set"
AGGREGATION = "aggregation"
_SEP = "|"
_EXCLUDED = "excluded"

METHOD = ("Each item's verdict is followed from the paper's protocol to the other one, one "
          "change at a time: first the label set, then the answer extraction (both on the "
          "paper's answer), then the prompt (the other protocol's own answer). Points are "
          "on the per-item accuracy scale, over the items both protocols score; they add up "
          "to the difference in per-item accuracy. Item set and aggregation differences are "
          "listed apart. Every item that moves is in protocols.csv.")


@dataclass(frozen=True)
class Counterfactual:
    """The paper's answer read part of the way to protocol P: `label_set`, the paper's
    extraction against P's labels (None: P's labels are the paper's); `extraction`, P's
    extraction and labels (None: cannot be separated from the prompt; then the two are one
    cause). `excluded`: P does not score this item at all."""

    label_set: float | None = None
    extraction: float | None = None
    excluded: bool = False


def reference_block(correct: float, others: Mapping[str, Counterfactual]) -> dict[str, float]:
    """The paper protocol's score block: its verdict `correct` and, per other protocol, the
    counterfactual readings of the same answer (keys `P|label set`, `P|extraction`,
    `P|excluded`; a score block holds numbers only)."""
    block = {"correct": float(correct)}
    for protocol, reading in others.items():
        if reading.excluded:
            block[f"{protocol}{_SEP}{_EXCLUDED}"] = 1.0
            continue
        if reading.label_set is not None:
            block[f"{protocol}{_SEP}label set"] = float(reading.label_set)
        if reading.extraction is not None:
            block[f"{protocol}{_SEP}extraction"] = float(reading.extraction)
    return block


def verdicts(block: Mapping[str, float]) -> dict[str, float]:
    """A reference block without its counterfactual keys (what the paper's metrics read)."""
    return {k: v for k, v in block.items() if _SEP not in k}


@dataclass(frozen=True)
class ItemDifference:
    """One cause that moved one item's verdict from the paper's protocol to `protocol`
    (`move`: +1 gained, -1 lost, or a fraction for a judge's partial credit)."""

    item: str
    group: str
    protocol: str
    cause: str
    move: float
    reference_answer: str
    answer: str
    reference_correct: float
    correct: float


class CauseMove(BaseModel):
    cause: str
    items: int = 0  # items whose verdict this step changed
    gained: int = 0
    lost: int = 0
    points: float = 0.0  # percentage points of per-item accuracy, signed


class ProtocolDifferences(BaseModel):
    protocol: str
    compared: int = 0  # items both protocols scored
    differ: int = 0  # of those, items whose final verdicts differ
    reference_accuracy: float | None = None  # the paper's per-item accuracy on them (0-1)
    accuracy: float | None = None  # this protocol's on them (0-1)
    causes: list[CauseMove] = []
    excluded: int = 0  # items this protocol does not score
    item_set_points: float | None = None  # the paper's accuracy on its items minus on all
    not_compared: int = 0  # items a failed or missing record left without both verdicts


class DifferenceNote(BaseModel):
    """A difference that is not per item: how a protocol aggregates, which items it keeps."""

    protocol: str
    cause: str
    what: str
    points: float | None = None  # what it moves the headline by, when one number says it


class DifferenceSummary(BaseModel):
    reference: str
    protocols: list[ProtocolDifferences] = []
    notes: list[DifferenceNote] = []

    def add_note(self, protocol: str, cause: str, what: str,
                 points: float | None = None) -> None:
        self.notes.append(DifferenceNote(protocol=protocol, cause=cause, what=what,
                                         points=points))

    def of(self, protocol: str) -> ProtocolDifferences | None:
        return next((p for p in self.protocols if p.protocol == protocol), None)


@dataclass
class _Item:
    """What has arrived of one item: the paper's reading and each protocol's."""

    group: str = ""
    reference: tuple[str, float, Mapping[str, float], str] | None = None  # id, s0, block, answer
    finals: dict[str, tuple[str, float, str]] = field(default_factory=dict)  # P: id, s3, answer


@dataclass
class _Tally:
    compared: int = 0
    differ: int = 0
    reference_sum: float = 0.0
    sum: float = 0.0
    moves: dict[str, list[float]] = field(default_factory=dict)  # cause: [items, +, -, sum]
    excluded: int = 0
    excluded_reference_sum: float = 0.0
    not_compared: int = 0


class Differences:
    """Streams a run's records and joins each item's verdicts across protocols."""

    def __init__(self, reference: str, protocols: Sequence[str]):
        self.reference = reference
        self.protocols = [p for p in protocols if p != reference]
        self._pending: dict[str, _Item] = {}
        self._tally = {p: _Tally() for p in self.protocols}
        self._all = 0
        self._all_reference_sum = 0.0

    def add(self, record: Record) -> list[ItemDifference]:
        """Take one record (the latest of its sample); the differing causes of every item it
        completes."""
        item_id = record.metadata.get("item")
        if not isinstance(item_id, str) or not self.protocols:
            return []
        item = self._pending.setdefault(item_id, _Item(group=record.group))
        if not record.ok:  # an error is not a verdict: the item is not compared
            return []
        for protocol in (self.reference, *self.protocols):
            if protocol not in record.scores:
                continue
            correct = record.scores[protocol].get("correct")
            if correct is None:
                continue
            answer = str(record.parsed.get(protocol, ""))
            if protocol == self.reference:
                item.reference = (record.id, float(correct), record.scores[protocol], answer)
            else:
                item.finals[protocol] = (record.id, float(correct), answer)
        if self._complete(item):
            del self._pending[item_id]
            return list(self._resolve(item_id, item))
        return []

    def finish(self) -> list[ItemDifference]:
        """Resolve every item still waiting (a record failed, is missing, or a protocol
        leaves the item out)."""
        out: list[ItemDifference] = []
        for item_id, item in self._pending.items():
            out.extend(self._resolve(item_id, item))
        self._pending.clear()
        return out

    def summary(self) -> DifferenceSummary:
        out = DifferenceSummary(reference=self.reference)
        overall = self._all_reference_sum / self._all if self._all else None
        for protocol in self.protocols:
            t = self._tally[protocol]
            causes = [CauseMove(cause=c, items=int(m[0]), gained=int(m[1]), lost=int(m[2]),
                                points=100 * m[3] / t.compared if t.compared else 0.0)
                      for c, m in sorted(t.moves.items(), key=lambda kv: _order(kv[0]))]
            kept = self._all - t.excluded
            item_set = None
            if t.excluded and kept and overall is not None:
                kept_accuracy = (self._all_reference_sum - t.excluded_reference_sum) / kept
                item_set = 100 * (kept_accuracy - overall)
            out.protocols.append(ProtocolDifferences(
                protocol=protocol, compared=t.compared, differ=t.differ,
                reference_accuracy=t.reference_sum / t.compared if t.compared else None,
                accuracy=t.sum / t.compared if t.compared else None, causes=causes,
                excluded=t.excluded, item_set_points=item_set, not_compared=t.not_compared))
        return out

    # -- inside -----------------------------------------------------------------------------
    def _complete(self, item: _Item) -> bool:
        if item.reference is None:
            return False
        block = item.reference[2]
        return all(p in item.finals or f"{p}{_SEP}{_EXCLUDED}" in block
                   for p in self.protocols)

    def _resolve(self, item_id: str, item: _Item) -> Iterator[ItemDifference]:
        if item.reference is None:
            for protocol in self.protocols:
                self._tally[protocol].not_compared += 1
            return
        ref_id, s0, block, ref_answer = item.reference
        self._all += 1
        self._all_reference_sum += s0
        for protocol in self.protocols:
            tally = self._tally[protocol]
            if f"{protocol}{_SEP}{_EXCLUDED}" in block:
                tally.excluded += 1
                tally.excluded_reference_sum += s0
                continue
            final = item.finals.get(protocol)
            if final is None:
                tally.not_compared += 1
                continue
            final_id, s3, answer = final
            tally.compared += 1
            tally.reference_sum += s0
            tally.sum += s3
            tally.differ += s3 != s0
            for cause, move in _steps(protocol, block, s0, s3, same=final_id == ref_id):
                if move == 0:
                    continue
                moved = tally.moves.setdefault(cause, [0, 0, 0, 0.0])
                moved[0] += 1
                moved[1 if move > 0 else 2] += 1
                moved[3] += move
                yield ItemDifference(item_id, item.group, protocol, cause, move, ref_answer,
                                     answer, s0, s3)


def _steps(protocol: str, block: Mapping[str, float], s0: float, s3: float, *,
           same: bool) -> Iterator[tuple[str, float]]:
    """(cause, move) for each step from s0 to s3; the moves add up to s3 - s0."""
    s1 = block.get(f"{protocol}{_SEP}label set", s0)
    yield STEPS[0], s1 - s0
    s2 = block.get(f"{protocol}{_SEP}extraction")
    if same:  # the same answer: nothing but the extraction (and labels) can differ
        yield STEPS[1], s3 - s1
    elif s2 is None:
        yield PROMPT_AND_EXTRACTION, s3 - s1
    else:
        yield STEPS[1], s2 - s1
        yield STEPS[2], s3 - s2


def _order(cause: str) -> int:
    known = (*STEPS, PROMPT_AND_EXTRACTION)
    return known.index(cause) if cause in known else len(known)


# -- output ---------------------------------------------------------------------------------
CSV_HEADER = ("item", "group", "protocol", "cause", "move", "paper_answer", "answer",
              "paper_correct", "correct")


def write_csv(rows: Iterable[ItemDifference], path: Path, reference: str = "paper") -> Path:
    """protocols.csv: one line per item and cause that moved its verdict."""
    out = io.StringIO()
    writer = csvcells.writer(out)
    writer.writerow([c.replace("paper", reference) for c in CSV_HEADER])
    for r in rows:
        writer.writerow([r.item, r.group, r.protocol, r.cause, f"{r.move:+g}",
                         r.reference_answer, r.answer, f"{r.reference_correct:g}",
                         f"{r.correct:g}"])
    write_atomic(path, out.getvalue().encode())
    return path


def write_run_csv(records: Iterable[Record], reference: str, protocols: Sequence[str],
                  path: Path) -> Path:
    """protocols.csv from a run's records, streamed once."""
    differences = Differences(reference, protocols)

    def rows() -> Iterator[ItemDifference]:
        for record in records:
            yield from differences.add(record)
        yield from differences.finish()

    return write_csv(rows(), path, reference)


def table_rows(summary: DifferenceSummary) -> list[list[str]]:
    """protocol, cause, items moved, gained, lost, points; then what is not per item."""
    rows: list[list[str]] = []
    for p in summary.protocols:
        if not p.compared and not p.excluded:
            continue
        total = 100 * ((p.accuracy or 0) - (p.reference_accuracy or 0)) if p.compared \
            else None
        rows.append([p.protocol, f"all causes ({p.compared} items)", str(p.differ), "", "",
                     f"{total:+.1f}" if total is not None else "-"])
        for c in p.causes:
            rows.append(["", c.cause, str(c.items), str(c.gained), str(c.lost),
                         f"{c.points:+.1f}"])
        if p.excluded:
            rows.append(["", f"{ITEM_SET} ({p.excluded} items left out)", str(p.excluded), "",
                         "", f"{p.item_set_points:+.1f}" if p.item_set_points is not None
                         else "-"])
        for i, n in enumerate(summary.notes, 1):
            if n.protocol == p.protocol:  # said in full below the table, as [i]
                rows.append(["", f"{n.cause} [{i}]", "", "", "",
                             f"{n.points:+.1f}" if n.points is not None else ""])
    return rows


def note_lines(summary: DifferenceSummary) -> list[str]:
    """What each note of the table says, numbered as the table marks it."""
    return [f"[{i}] {n.protocol}, {n.cause}: {n.what}"
            for i, n in enumerate(summary.notes, 1)]


HEADER = ["protocol", "cause", "items", "gained", "lost", "points"]


def section(summary: DifferenceSummary, title: str = "Why the protocols differ") -> Section:
    """The report's section: the table, what each note says, and how it is computed."""
    blocks: list = [Table(HEADER, table_rows(summary), 2)]
    said = note_lines(summary)
    if said:
        blocks.append(Items(said))
    blocks.append(Note(METHOD))
    return Section(title, blocks)


def show(summary: DifferenceSummary, console: Console,
         title: str = "Why the protocols differ from the paper's, item by item") -> None:
    """The terminal table (within 100 columns), then the notes one per line."""
    rows = table_rows(summary)
    if not rows:
        return
    table = RichTable(title=title, title_justify="left", box=None, pad_edge=False)
    for i, name in enumerate(HEADER):
        table.add_column(name, justify="right" if i >= 2 else "left",
                         overflow="fold", max_width=44 if i == 1 else None)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for said in note_lines(summary):
        line(console, f"  {said}")
    line(console, "  points: per-item accuracy, paper -> protocol; every moved item is in "
                  "protocols.csv", style="dim")
