"""From the paper's number for a model to a run's, one measured cause at a time: the answer
to "why does my number differ from the paper's?" (`visioneval explain`).

The steps, in order, each the difference of two numbers the run measured (so they add up
exactly from the paper's number to the run's):
1. unexplained: the run under the paper's rules, as the paper's model saw the images (the
   transport variant when there is one), minus the paper's number: what visioneval cannot
   attribute (the model's version, decoding, the data copy). Its interval is the run's own
   95% interval shifted by the paper's number: when it holds 0, sampling noise explains it.
2. image transport: the run as the endpoint received the images minus the variant that
   shows the model what the paper's model saw (`--variant max-side:N` or `jpeg:Q`; the
   resolution probe says what the endpoint does to an image).
3. protocol: the other protocol's headline minus the paper's, on the same answers where the
   prompt is the same. Its parts (indented) are the per-item causes of
   `harness.differences` (label set, extraction, prompt: per-item accuracy points, over the
   items both protocols score), the item set, and the aggregation, which is what remains
   between the two headlines once the per-item causes are counted.
4. label corrections: the corrected labels' headline minus the original's.
The run's number closes the table, with its interval ("sampling noise").

A step's interval combines the two numbers' intervals as if they were independent
(half-widths added in quadrature): conservative, since both come from the same items. A
per-item cause's interval is the normal one of a mean of per-item moves, with items taken as
independent."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ValidationError
from rich.console import Console
from rich.table import Table as RichTable

from visioneval.core.blocks import Charts, Items, Note, Section, Table
from visioneval.core.figures import Waterfall, WaterfallStep
from visioneval.core.gap import GapHeadlines, Labels, ProtocolHeadline, Side
from visioneval.core.store import write_atomic
from visioneval.harness.differences import DifferenceSummary
from visioneval.terminal import line
from visioneval.validation import first_error

FILE = "explanation.json"
REPRODUCED = 1e-6  # points: a pairing whose headline differs more is not used
Z95 = 1.959963984540054
Kind = Literal["paper", "step", "part", "noise", "yours"]

UNEXPLAINED = "unexplained (model, decoding, data)"
TRANSPORT = "image transport"
CORRECTIONS = "label corrections"
AGGREGATION_REST = "aggregation (what remains)"
METHOD = (
    "Each step is the difference of two numbers this run measured, so the steps add up from "
    "the paper's number to yours. A step between two of them has the 95% interval of a "
    "paired cluster bootstrap: each resample draws the images (pairs, groups) once and "
    "computes both numbers from it; one marked " + "\u2020" + " combines the two numbers' "
    "intervals as if independent instead (wider), where the benchmark cannot give each "
    "item's part. Indented parts split the protocol step: label set, extraction and prompt in "
    "per-item accuracy points over the items both protocols score (normal intervals, items "
    "taken as independent), then what the aggregation does to them. 'unexplained' is what no "
    "measured cause accounts for; its interval is your number's, so when it holds 0 sampling "
    "noise alone can explain it.")
INDEPENDENT = "\u2020"  # marks an interval combined as if independent
INDEPENDENT_NOTE = (INDEPENDENT + " the two numbers' intervals combined as if independent "
                    "(wider than a paired interval: both come from the same items)")


class PaperNumber(BaseModel, frozen=True):
    """The paper's published number the explanation starts from."""

    model: str
    value: float
    column: str  # the published column's label
    citation: str


class Step(BaseModel, frozen=True):
    kind: Kind
    name: str
    points: float | None = None  # a step's signed points; a total's value
    interval: tuple[float, float] | None = None  # of the points (a total: of its value)
    running: float | None = None  # the value after this step
    note: str = ""
    paired: bool = False  # its interval from paired resamples of the same clusters


class Explanation(BaseModel):
    benchmark: str
    model: str
    protocol: str
    labels: Labels
    paper: PaperNumber
    steps: list[Step]
    notes: list[str] = []

    @property
    def yours(self) -> float:
        return self.steps[-1].points or 0.0

    def step(self, name: str) -> Step | None:
        return next((s for s in self.steps if s.name == name or s.name.startswith(name + ":")
                     or s.name.startswith(name + " (")), None)


class Transport(BaseModel, frozen=True):
    """The variant that shows the model what the paper's model saw, and its headlines."""

    variant: str
    what: str  # what the variant does to an image
    probe: str | None = None  # what the resolution probe found, in one sentence


class Pairing(Protocol):
    """Paired intervals of a step's two headlines (harness.gapboot.UnitTable)."""

    def value(self, side: Side) -> float | None: ...

    def difference(self, before: Side, after: Side) -> tuple[float, float] | None: ...


def explain(benchmark: str, model: str, paper: PaperNumber, sent: GapHeadlines,
            protocol: str, labels: Labels, differences: DifferenceSummary | None = None,
            transport: Transport | None = None, seen: GapHeadlines | None = None,
            pairing: Pairing | None = None) -> Explanation:
    """The steps from `paper` to the run's `protocol` headline on `labels` (`sent`: the
    run's headlines as the endpoint received the images; `seen`: the transport variant's;
    `pairing`: paired intervals, used for a step whose two headlines it reproduces).
    ValueError when the run lacks a number the steps need."""
    pair = _Paired(pairing)
    base = _need(sent, sent.reference, "original", "the paper's protocol")
    target = _need(sent, protocol, labels, f"{protocol}'s rules on the {labels} labels")
    steps = [Step(kind="paper", name=f"the paper: {paper.model}", points=paper.value,
                  running=paper.value, note=paper.column)]
    start = base
    if transport is not None and seen is not None:
        start = _need(seen, sent.reference, "original",
                      f"the paper's protocol in the variant {transport.variant}")
    steps.append(Step(
        kind="step", name=UNEXPLAINED, points=start.value - paper.value,
        interval=_shifted(start.interval, -paper.value), running=start.value,
        note=_noise(start, paper.value)))
    if transport is not None and seen is not None:
        steps.append(_difference(
            f"{TRANSPORT} (as sent vs {transport.variant})", start, base,
            "endpoint probed" if transport.probe else "",
            pair.interval((transport.variant, (sent.reference, "original")), start,
                          ("", (sent.reference, "original")), base)))
    running = base
    if protocol != sent.reference:
        own = _need(sent, protocol, "original", f"{protocol}'s rules on the original labels")
        total = _difference(f"protocol: {protocol}", running, own,
                            f"{base.metric} -> {own.metric}"
                            if own.metric != base.metric else "",
                            pair.interval(("", (sent.reference, "original")), running,
                                          ("", (protocol, "original")), own))
        steps.append(total)
        steps += _parts(differences, protocol, total.points or 0.0)
        running = own
    if labels == "corrected":
        steps.append(_difference(CORRECTIONS, running, target,
                                 "the benchmark's corrections manifest",
                                 pair.interval(("", (protocol, "original")), running,
                                               ("", (protocol, labels)), target)))
    steps.append(Step(kind="noise", name="sampling noise (your interval)",
                      interval=_shifted(target.interval, -target.value),
                      note="" if target.interval is not None
                      else f"no interval: {target.no_interval or 'not computed'}"))
    steps.append(Step(kind="yours", name=f"yours: {protocol}, {labels} labels",
                      points=target.value, interval=target.interval, running=target.value,
                      note=target.metric))
    notes = []
    if transport is not None:
        notes.append(f"image transport: {transport.what}")
        if transport.probe:
            notes.append(f"the resolution probe: {transport.probe}")
    else:
        notes.append("image transport: not measured (the run has no variant showing the "
                     "model what the paper's model saw: add --variant max-side:N or jpeg:Q)")
    return Explanation(benchmark=benchmark, model=model, protocol=protocol, labels=labels,
                       paper=paper, steps=steps, notes=notes)


def transport_advice(paper_side: int, factor: float | None, chosen: str | None) -> str:
    """Which `max-side` variant shows the model what the paper's model saw (`paper_side`
    px on the long side) through an endpoint that reduces images by `factor` (the resolution
    probe's; None: not measured), and whether the run's transport variant `chosen` is it."""
    wanted = f"max-side:{round(paper_side * (factor or 1.0))}"
    if factor is None:
        through = "if your endpoint keeps their size (--probe-resolution measures it)"
    elif factor > 1.05:
        through = f"through your endpoint, which reduces images {factor:.2f}x (the probe)"
    else:
        through = "through your endpoint, which keeps their size (the probe)"
    head = f"the paper's model saw {paper_side} px on the long side"
    if chosen is not None and _close(chosen, wanted):
        return f"{head}: {chosen} shows your model the same {through}"
    told = f" ({chosen} does not)" if chosen else ""
    return f"{head}: --variant {wanted} shows your model the same {through}{told}"


def _close(chosen: str, wanted: str) -> bool:
    """Two max-side variants within 2% of each other."""
    kind, _, value = chosen.partition(":")
    if kind != "max-side" or not value.isdigit():
        return False
    target = int(wanted.partition(":")[2])
    return abs(int(value) - target) <= 0.02 * target


def _need(headlines: GapHeadlines, protocol: str, labels: Labels, what: str
          ) -> ProtocolHeadline:
    found = headlines.of(protocol, labels)
    if found is None:
        have = ", ".join(sorted({f"{h.protocol} ({h.labels})" for h in headlines.headlines}))
        raise ValueError(f"the run has no score under {what} (it has: {have or 'none'})")
    return found


def _half(interval: tuple[float, float] | None, value: float) -> float | None:
    if interval is None:
        return None
    return max(value - interval[0], interval[1] - value)


def _shifted(interval: tuple[float, float] | None, by: float) -> tuple[float, float] | None:
    return None if interval is None else (interval[0] + by, interval[1] + by)


def _noise(headline: ProtocolHeadline, paper: float) -> str:
    interval = headline.interval
    if interval is None:
        return f"no interval: {headline.no_interval}" if headline.no_interval \
            else "no interval"
    inside = interval[0] <= paper <= interval[1]
    return "within sampling noise" if inside else "beyond sampling noise"


class _Paired:
    """A step's paired interval, when the pairing reproduces both of its headlines."""

    def __init__(self, pairing: Pairing | None):
        self.pairing = pairing

    def interval(self, before: Side, first: ProtocolHeadline, after: Side,
                 second: ProtocolHeadline) -> tuple[float, float] | None:
        if self.pairing is None:
            return None
        for side, headline in ((before, first), (after, second)):
            found = self.pairing.value(side)
            if found is None or abs(found - headline.value) > REPRODUCED:
                return None
        return self.pairing.difference(before, after)


def _difference(name: str, before: ProtocolHeadline, after: ProtocolHeadline,
                note: str, paired: tuple[float, float] | None = None) -> Step:
    """A step between two headlines: its paired interval when there is one, else their
    intervals combined as if independent (wider: both come from the same items)."""
    points = after.value - before.value
    if paired is not None:
        return Step(kind="step", name=name, points=points, interval=paired,
                    running=after.value, note=note, paired=True)
    a, b = _half(before.interval, before.value), _half(after.interval, after.value)
    interval = None
    if a is not None and b is not None:
        half = math.hypot(a, b)
        interval = (points - half, points + half)
    return Step(kind="step", name=name, points=points, interval=interval,
                running=after.value, note=note)


def moves_interval(points: float, moved: int, n: int) -> tuple[float, float]:
    """The normal 95% interval of a mean of per-item moves within [-1, 1], `moved` of `n`
    items nonzero and their mean `points` (percent): the variance bounded by the share of
    items moved, as the moves' squares are at most 1."""
    mean = points / 100
    half = 100 * Z95 * math.sqrt(max(moved / n - mean * mean, 0.0) / n)
    return points - half, points + half


def _parts(summary: DifferenceSummary | None, protocol: str, total: float) -> list[Step]:
    """The protocol step split: per-item causes, the item set, and what aggregation does."""
    found = summary.of(protocol) if summary is not None else None
    if found is None or not found.compared:
        return []
    parts: list[Step] = []
    n = found.compared
    for cause in found.causes:
        parts.append(Step(kind="part", name=cause.cause, points=cause.points,
                          interval=moves_interval(cause.points, cause.items, n),
                          note=f"{cause.items} of {n} items: +{cause.gained} -{cause.lost}"))
    if found.excluded:
        parts.append(Step(kind="part", name="item set", points=found.item_set_points,
                          note=f"{found.excluded} items left out"))
    counted = sum(p.points or 0.0 for p in parts)
    parts.append(Step(kind="part", name=AGGREGATION_REST, points=total - counted,
                      note="pairs, groups, means"))
    return parts


# -- output ---------------------------------------------------------------------------------
HEADER = ["step", "points", "95% interval", "running", "note"]


def _signed(value: float | None) -> str:
    return "" if value is None else f"{value:+.1f}"


def rows(explanation: Explanation) -> list[list[str]]:
    out = []
    for s in explanation.steps:
        name = f"  · {s.name}" if s.kind == "part" else s.name
        if s.kind in ("paper", "yours"):
            value = f"{s.points:.1f}" if s.points is not None else ""
            interval = f"[{s.interval[0]:.1f}, {s.interval[1]:.1f}]" if s.interval else ""
            out.append([name, "", interval, value, s.note])
            continue
        interval = f"[{s.interval[0]:+.1f}, {s.interval[1]:+.1f}]" if s.interval else ""
        if interval and s.kind == "step" and s.name != UNEXPLAINED and not s.paired:
            interval += INDEPENDENT
        running = f"{s.running:.1f}" if s.running is not None else ""
        out.append([name, _signed(s.points), interval, running, s.note])
    return out


def title(explanation: Explanation) -> str:
    return (f"From the paper's number to yours: {explanation.benchmark}, "
            f"{explanation.paper.model} -> {explanation.model}")


def show(explanation: Explanation, console: Console) -> None:
    """The terminal table (within 100 columns), then the notes."""
    table = RichTable(title=title(explanation), title_justify="left", box=None,
                      pad_edge=False)
    for i, name in enumerate(HEADER):
        table.add_column(name, justify="right" if 1 <= i <= 3 else "left", overflow="fold",
                         max_width=36 if i == 0 else 26 if i == 4 else None)
    for row in rows(explanation):
        table.add_row(*row)
    console.print(table)
    if any(INDEPENDENT in row[2] for row in rows(explanation)):
        line(console, f"  {INDEPENDENT_NOTE}")
    for said in explanation.notes:
        line(console, f"  {said}")
    line(console, f"  the paper: {explanation.paper.citation}", style="dim")


def chart(explanation: Explanation) -> Waterfall:
    steps = []
    before = explanation.paper.value
    for s in explanation.steps:
        if s.kind in ("paper", "yours"):
            steps.append(WaterfallStep(s.name, 0.0, s.points or 0.0, total=True,
                                       interval=s.interval))
            before = s.points or 0.0
        elif s.kind == "step" and s.running is not None:
            steps.append(WaterfallStep(s.name, before, s.running, interval=s.interval))
            before = s.running
    return Waterfall(title(explanation), steps)


def section(explanations: Sequence[Explanation]) -> Section:
    blocks: list = []
    for e in explanations:
        page_rows = [[r[0], r[4], *r[1:4]] for r in rows(e)]  # the note beside the step
        blocks += [Charts([chart(e)]), Table([HEADER[0], HEADER[4], *HEADER[1:4]],
                                             page_rows, 2)]
        if e.notes:
            blocks.append(Items(list(e.notes)))
    blocks.append(Note(METHOD))
    return Section("Why your number differs from the paper's", blocks)


class Explanations(BaseModel):
    """explanation.json: what `visioneval explain` found, one waterfall per protocol."""

    explanations: list[Explanation]


def write(explanations: Sequence[Explanation], directory: Path) -> Path:
    path = directory / FILE
    write_atomic(path, Explanations(explanations=list(explanations))
                 .model_dump_json(indent=1).encode())
    return path


def read(directory: Path) -> list[Explanation]:
    """explanation.json's waterfalls ([] when the run has none); ValueError naming the file
    when it cannot be read."""
    path = directory / FILE
    if not path.is_file():
        return []
    try:
        return Explanations.model_validate_json(path.read_bytes()).explanations
    except ValidationError as exc:
        raise ValueError(f"{path}: not an explanation visioneval wrote "
                         f"({first_error(exc)})") from None
