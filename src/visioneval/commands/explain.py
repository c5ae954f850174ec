"""`visioneval explain RUN`: from the paper's published number for a model to the run's, one
measured cause at a time (harness.waterfall), in the terminal, in explanation.json and as a
chart on the run's report page. Reading the run never sends a request: the transport
variant's headline is recomputed from the answers the run holds."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from visioneval import terminal
from visioneval.commands.common import consoles, guarded, named_definition, warn_untrusted
from visioneval.core import registry
from visioneval.core.benchmark import Benchmark
from visioneval.core.capabilities import ExplainsGap, HasPublished, SharesGap
from visioneval.core.gap import GapHeadlines, Labels
from visioneval.core.published import PublishedTable
from visioneval.core.records import Record
from visioneval.core.rundir import OpenedRun, load
from visioneval.core.runfiles import VariantInfo
from visioneval.core.variant_ids import as_original, family_of
from visioneval.harness import waterfall
from visioneval.harness.differences import DifferenceSummary
from visioneval.harness.gapboot import UnitTable
from visioneval.report.page import write_page
from visioneval.terminal import line

TRANSPORT_KINDS = ("max-side", "jpeg", "scale", "grayscale")


@dataclass(frozen=True)
class ExplainRequest:
    run_dir: Path
    paper_model: str | None = None
    paper_value: float | None = None
    protocol: str | None = None  # None: every protocol the run scored
    labels: Labels = "original"
    transport: str | None = None  # a variant's name; None: the run's one image-changing one
    paper_side: int | None = None  # the long side, in pixels, the paper's model saw
    definition: str | None = None


def explain(request: ExplainRequest) -> int:
    """Print the waterfall of each protocol, write explanation.json and redraw the report;
    exit 0, or 2 with one line."""
    console, err = consoles()

    def action() -> int:
        named = named_definition(request.definition)
        view = load(request.run_dir, named)
        warn_untrusted(err, [view.untrusted, view.data_change])
        found = explanations(view, request)
        for i, one in enumerate(found):
            if i:
                console.print()
            waterfall.show(one, console)
        line(console, "  how each step is measured: docs/explain.md", style="dim")
        try:
            written = waterfall.write(found, view.directory)
            page = write_page(load(request.run_dir, named))
        except OSError as exc:  # a run directory you may read but not write
            terminal.warning_line(err, f"{view.directory}: explanation.json and the report "
                                       f"were not written ({exc.strerror or exc})")
            return 0
        line(console, f"written: {written.name}; report: {page}")
        return 0

    return guarded(err, action)


def explanations(view: OpenedRun, request: ExplainRequest) -> list[waterfall.Explanation]:
    """One waterfall per protocol asked for; ValueError with one line when the run cannot be
    explained (a benchmark without the capability, no published number for the model, a
    protocol or variant the run does not have)."""
    definition = view.shown
    if not isinstance(definition, ExplainsGap) or not isinstance(definition, HasPublished):
        known = [name for name in registry.names()
                 if _explains(registry.definition(name))]
        raise ValueError(f"{view.directory}: visioneval explain reads runs of "
                         f"{', '.join(known)} (each scored under several harnesses' rules); "
                         f"{view.benchmark} is not one")
    sent = definition.gap_headlines(view.metrics)
    if sent is None:
        raise ValueError(f"{view.directory}: metrics.json holds no score to explain")
    protocols = [request.protocol] if request.protocol else sent.protocols
    for protocol in protocols:
        if protocol not in sent.protocols:
            raise ValueError(f"--as {protocol}: the run scored {', '.join(sent.protocols)}")
    paper = _paper_number(definition.published(), view, sent, request)
    reader = _reading_benchmark(view)
    transport, seen = _transport(view, definition, reader, request.transport)
    raw = view.metrics.get("differences")
    differences = DifferenceSummary.model_validate(raw) if isinstance(raw, dict) else None
    pairing = _pairing(view, reader, sent, transport)
    found = [waterfall.explain(view.benchmark, view.model, paper, sent, protocol,
                               request.labels, differences, transport, seen, pairing)
             for protocol in protocols]
    if request.paper_side is not None:
        probe = view.info.resolution_probe
        factor = None if probe is None else probe.factor if probe.factor is not None \
            else 1.0 if probe.status == "no loss" else None
        advice = waterfall.transport_advice(request.paper_side, factor,
                                            transport.variant if transport else None)
        for one in found:
            one.notes.append(advice)
    return found


def _pairing(view: OpenedRun, benchmark: Benchmark[Any], sent: GapHeadlines,
             transport: waterfall.Transport | None
             ) -> UnitTable | None:
    """Every unit's part of the headlines, from the records (the stored images' and the
    transport variant's), when the benchmark says them (`SharesGap`); else None and the
    steps' intervals are combined as if independent."""
    if not isinstance(benchmark, SharesGap):
        return None
    table = UnitTable(sent.weights)
    table.add("", benchmark.gap_units(view.iter_records()))
    if transport is not None:
        table.add(transport.variant, benchmark.gap_units(_family(view, transport.variant)))
    return table


def _explains(definition: object) -> bool:
    return isinstance(definition, ExplainsGap) and isinstance(definition, HasPublished)


def _paper_number(table: PublishedTable, view: OpenedRun, sent: GapHeadlines,
                  request: ExplainRequest) -> waterfall.PaperNumber:
    column = table.column(sent.column)
    label = column.label
    if request.paper_value is not None:
        return waterfall.PaperNumber(model=request.paper_model or "the paper's model",
                                     value=request.paper_value, column=label,
                                     citation="given with --paper-value")
    name = request.paper_model or view.model
    model = table.find_model(name)
    if model is None:
        how = "--paper-model" if request.paper_model else "the run's model name"
        raise ValueError(f"{how} {name!r} matches no model published for {table.benchmark} "
                         f"(known: {', '.join(table.model_names())}); name one with "
                         "--paper-model, or give the number with --paper-value")
    value = next((row.cells[sent.column] for row in table.rows_of(model.name)
                  if sent.column in row.cells), None)
    if value is None:
        raise ValueError(f"{model.name}: the published table has no {column.label} for it")
    return waterfall.PaperNumber(model=model.name, value=value, column=label,
                                 citation=table.citation)


def _transport(view: OpenedRun, definition: ExplainsGap, benchmark: Benchmark[Any],
               name: str | None
               ) -> tuple[waterfall.Transport | None, GapHeadlines | None]:
    """The variant that shows the model what the paper's model saw, and its headlines
    recomputed from its records; (None, None) when the run has none and none was named."""
    variants = view.info.variants or []
    if name is not None:
        chosen = next((v for v in variants if v.name == name), None)
        if chosen is None:
            have = ", ".join(v.name for v in variants) or "none"
            raise ValueError(f"--transport {name}: the run has no such variant (it has: "
                             f"{have})")
    else:
        changing = [v for v in variants if v.kind in TRANSPORT_KINDS]
        if len(changing) > 1:
            raise ValueError("the run has several image-changing variants ("
                             f"{', '.join(v.name for v in changing)}); name the one that "
                             "shows the model what the paper's model saw with --transport")
        if not changing:
            return None, None
        chosen = changing[0]
    metrics = benchmark.summarize(_family(view, chosen.name))
    seen = definition.gap_headlines(metrics)
    probe = view.info.resolution_probe
    return waterfall.Transport(variant=chosen.name, what=_what(chosen),
                               probe=probe.summary if probe is not None else None), seen


def _reading_benchmark(view: OpenedRun) -> Benchmark[Any]:
    """The run's benchmark rebuilt to read its records (nothing is sent or solved)."""
    return view.shown.build_to_read(dict(view.info.options or {}))


def _family(view: OpenedRun, variant: str) -> Iterator[Record]:
    """A variant's records, each seen as its original's."""
    for record in view.iter_records(variants=True):
        if family_of(record) == variant:
            yield as_original(record)


def _what(variant: VariantInfo) -> str:
    return f"{variant.name}: {variant.transform}"
