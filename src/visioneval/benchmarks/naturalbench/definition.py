"""How NaturalBench runs are shown: the four figures per protocol and label set with their
intervals, the image controls against chance, the layout check, why the protocols differ,
and the compare table."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval import fmt
from visioneval.benchmarks.naturalbench import tables
from visioneval.benchmarks.naturalbench.metrics import NaturalBenchMetrics
from visioneval.benchmarks.naturalbench.options import (
    NaturalBenchOptions,
    NaturalBenchSynthOptions,
)
from visioneval.benchmarks.naturalbench.spec import (
    CHANCE,
    LABEL_SET_NAMES,
    METRIC_NAMES,
    METRICS,
)
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.blocks import ComparisonTable, Items, Note, PercentRows, Section, Table
from visioneval.core.foreign import ForeignReader
from visioneval.core.gap import GapHeadlines, dig, gathered
from visioneval.core.headline import Headline
from visioneval.core.published import PublishedTable, RunBeside
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun
from visioneval.harness.differences import DifferenceSummary, section
from visioneval.stats.paired import PairedRow


def _row(protocol: str, block: dict[str, Any]) -> list[str]:
    return tables.figure_row(protocol, block)


class NaturalBenchDefinition(BenchmarkDefinition):
    name = "naturalbench"
    summary = ("Evaluate a model on NaturalBench (arXiv 2410.14669): G-Acc, Q-Acc, I-Acc and "
               "Acc under the paper's, lmms-eval's and VLMEvalKit's protocols, side by side.")
    options_model = NaturalBenchOptions
    metrics_model = NaturalBenchMetrics
    model_help = "Model name; builtin: random."
    max_tokens = 128
    max_tokens_help = ("The authors' example script's max_new_tokens (lmms-eval's task "
                       "uses 16).")
    synth_help = ("Write a small NaturalBench-shaped set (groups of two questions and two "
                  "images) in the Hub's schema.")
    synth_rows = 40
    synth_options = NaturalBenchSynthOptions
    settings_that_matter = ("protocol", "labels", "num_samples")

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.naturalbench.benchmark import build

        return build(options)

    def benchmark_class(self) -> type[Benchmark]:
        from visioneval.benchmarks.naturalbench.benchmark import NaturalBench

        return NaturalBench

    def headline(self, metrics: dict[str, Any]) -> Headline:
        from visioneval.benchmarks.naturalbench.headline import headline

        return headline(metrics)

    def synth(self, out: Path, rows: int, seed: int,
              options: NaturalBenchSynthOptions | None = None) -> list[str]:
        from visioneval.benchmarks.naturalbench.synth import write_synthetic

        breaks = (options or NaturalBenchSynthOptions()).layout_breaks
        path = write_synthetic(out, rows, seed, breaks)
        return [f"{path}: {rows} groups ({4 * rows} answers)"
                + (f", {breaks} breaking the fixed layout" if breaks else "")]

    # -- the report ------------------------------------------------------------------------
    def sections(self, view: ReadableRun) -> list[Section]:
        metrics = view.metrics
        out = []
        for label_set, per in (metrics.get("results") or {}).items():
            rows = [_row(p, b) for p, b in per.items()]
            out.append(Section(f"NaturalBench, {LABEL_SET_NAMES[label_set]} (percent)", [
                Table(tables.HEADER, rows, 1),
                Note(tables.INTERVALS + " G-Acc is the paper's main figure. lmms-eval reports no "
                     "Acc ('-').")]))
        layout = metrics.get("layout") or {}
        if layout.get("groups"):
            items = [f"{layout['fixed']} of {layout['groups']} groups' answer columns follow "
                     f"the fixed layout; {layout['breaks']} break it; {layout['unreadable']} "
                     "hold an answer that is neither Yes/No nor A/B"]
            if layout.get("breaking_groups"):
                items.append("groups breaking it: " + ", ".join(layout["breaking_groups"]))
            for protocol, moves in (metrics.get("label_set_difference") or {}).items():
                items.append(f"{protocol}, answer columns minus fixed layout: " + ", ".join(
                    f"{METRIC_NAMES[m]} {fmt.pct(v, signed=True)}" for m, v in moves.items()))
            out.append(Section("The fixed layout against the answer columns", [
                Items(items), Note("Every implementation scores a group as if its answers "
                                   "were Yes/No/No/Yes (A/B/B/A) and never reads the answer "
                                   "columns (naturalbench_vqa.py:82-118); label set "
                                   "'corrected' scores the answer columns instead.")]))
        for control, by_label in (metrics.get("controls") or {}).items():
            for label_set, per in by_label.items():
                rows = [_row(p, b) for p, b in per.items()]
                rows.append(["chance", *(fmt.pct(CHANCE[m]) for m in METRICS), "", "", ""])
                out.append(Section(f"--variant {control}: no image "
                                   f"({LABEL_SET_NAMES[label_set]}, percent)", [
                    Table(tables.HEADER, rows, 1),
                    Note("Chance: independent uniform guesses. A model that answers a "
                         "question the same way whatever the image scores 0 on Q-Acc and "
                         "G-Acc: each question's two images want different answers.")]))
        if metrics.get("differences"):
            out.append(section(DifferenceSummary.model_validate(metrics["differences"]),
                               "Why the protocols differ (one space in the prompt)"))
        return out

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        tables.show_main(view.metrics, view.model, console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        tables.show(view.metrics, view.model, console)

    # -- records ---------------------------------------------------------------------------
    def paired_rows(self, record: Record) -> dict[str, Any]:
        """Each protocol's verdict per answer (Acc; McNemar), a group's answers one
        cluster."""
        group = record.metadata.get("group_id")
        return {f"Acc ({key})": PairedRow("correct", (float(score["correct"]),),
                                          group if isinstance(group, str) else None)
                for key, score in record.scores.items() if "correct" in score}

    chance_rule = ("chance: one of the two answers (Yes/No, A/B) picked at random; per answer "
                   "1/2 (a question's two answers 1/4, a group's four 1/16)")

    def chance_rows(self, record: Record) -> dict[str, Any]:
        return {f"Acc ({key})": PairedRow("correct", (0.5,))
                for key, score in record.scores.items() if "correct" in score}

    def browser_row(self, record: Record) -> dict[str, Any]:
        meta = record.metadata
        target = record.target if isinstance(record.target, dict) else {}
        views = {p: {"a": str(record.parsed.get(p, "")), "ok": s.get("correct") == 1.0}
                 for p, s in record.scores.items() if "correct" in s}
        labels = [str(v) for v in dict.fromkeys(target.values()) if v]
        return {"t": f"fixed layout {target.get('original')}, answer column "
                     f"{target.get('corrected') or '(unreadable)'}",
                "labels": labels, "v": views,
                "meta": f"group {meta.get('group_id', '')} {meta.get('position', '')}, "
                        f"{meta.get('type', '')}, {meta.get('family', '')} prompt"}

    def gap_headlines(self, metrics: dict[str, Any]) -> GapHeadlines | None:
        """G-Acc (all four answers of a group right) under each protocol: the paper's
        headline; lmms-eval and VLMEvalKit report it too (`visioneval explain`)."""
        from visioneval.benchmarks.naturalbench.spec import PROTOCOLS

        return gathered("g_acc", "paper", PROTOCOLS, lambda protocol, labels: (
            dig(metrics, "results", labels, protocol), "g_acc", "G-Acc"))

    def published(self) -> PublishedTable:
        from visioneval.benchmarks.naturalbench.published import table

        return table()

    def beside_published(self, view: ReadableRun) -> RunBeside:
        from visioneval.benchmarks.naturalbench.published import beside

        return beside(view.info, view.metrics)

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable:
        """The four figures per run and protocol, under each run's first label set."""
        found = PercentRows(missing="-")
        for view in views:
            label_sets = view.metrics.get("label_sets") or []
            if not label_sets:
                continue
            per = (view.metrics.get("results") or {}).get(label_sets[0], {})
            suffix = "" if label_sets[0] == "original" else " (answer columns)"
            for protocol, block in per.items():
                found.add(view, protocol + suffix, [(block, m) for m in METRICS])
        return found.table(self.name, ["Model", "Protocol", *(METRIC_NAMES[m] for m in METRICS)],
                           ["A run's protocols read the answers to two prompts (the paper's, "
                            "and the harnesses' with one more space); its cost is on each row, "
                            "spent once."])

    def foreign_logs(self) -> dict[str, ForeignReader]:
        """lmms-eval's naturalbench samples logs and VLMEvalKit's prediction files
        (`visioneval rescore`)."""
        from visioneval.benchmarks.naturalbench.lmms_eval import NaturalBenchLmmsEval
        from visioneval.benchmarks.naturalbench.vlmevalkit import NaturalBenchVlmEvalKit

        return {"lmms-eval": NaturalBenchLmmsEval(),
                "vlmevalkit": NaturalBenchVlmEvalKit()}


DEFINITION = NaturalBenchDefinition()


class RescoredNaturalBench(NaturalBenchDefinition):
    """NaturalBench runs re-scored from another tool's log: shown like any NaturalBench
    run, rebuilt (report, compare) without data."""

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.naturalbench.benchmark import scoring_only

        return scoring_only(options)


RESCORED = RescoredNaturalBench()
