"""How MMVP runs are shown: pair and per-question accuracy per protocol and label set, why the
protocols differ, what the label corrections change, per visual pattern, the image-free
controls against chance, the published numbers and the compare table."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval import fmt
from visioneval.benchmarks.mmvp import tables
from visioneval.benchmarks.mmvp.metrics_model import MmvpMetrics
from visioneval.benchmarks.mmvp.options import MmvpOptions, SynthOptions
from visioneval.benchmarks.mmvp.spec import PROTOCOLS, score_key
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


class MmvpDefinition(BenchmarkDefinition):
    name = "mmvp"
    summary = ("Evaluate a model on MMVP (arXiv 2401.06209, CLIP-blind pairs) under the "
               "paper's, lmms-eval's and VLMEvalKit's protocols, side by side.")
    options_model = MmvpOptions
    metrics_model = MmvpMetrics
    model_help = "Model name; builtin: random."
    max_tokens = 1024
    max_tokens_help = ("The paper's max_new_tokens (scripts/evaluate_mllm.py line 94); "
                       "lmms-eval uses 16.")
    synth_help = ("Write a small MMVP-shaped set (Questions.csv and MMVP Images/, or "
                  "lmms-eval's parquet with --layout) with pairs made as the real ones.")
    synth_rows = 300
    synth_options = SynthOptions
    settings_that_matter = ("protocol", "labels", "pairs", "judge_model")
    judge_target = ("judge_base_url", "judge_api_key_env")

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.mmvp.benchmark import build

        return build(options)

    def benchmark_class(self) -> type[Benchmark]:
        from visioneval.benchmarks.mmvp.benchmark import Mmvp

        return Mmvp

    def headline(self, metrics: dict[str, Any]) -> Headline:
        from visioneval.benchmarks.mmvp.headline import headline

        return headline(metrics)

    def synth(self, out: Path, rows: int, seed: int,
              options: SynthOptions | None = None) -> list[str]:
        from visioneval.benchmarks.mmvp.synth import write_synthetic

        layout = (options or SynthOptions()).layout
        path = write_synthetic(out, rows, seed, layout)
        return [f"{path}: {rows} questions ({rows // 2} pairs, {layout} layout)"]

    # -- what a run shows ---------------------------------------------------------------------
    def sections(self, view: ReadableRun) -> list[Section]:
        from visioneval.benchmarks.mmvp import controls

        metrics = view.metrics
        out = [Section("Accuracy by protocol (percent)", [
            Table(tables.HEADER, tables.main_rows(metrics), 2), Note(tables.NOTE),
            Items([f"{p}: {how}" for p, how in (metrics.get("readings") or {}).items()])])]
        if metrics.get("differences"):
            out.append(section(DifferenceSummary.model_validate(metrics["differences"])))
        effect = (metrics.get("corrections") or {}).get("effect")
        if effect:
            rows = [[p, str(e.get("changed", 0)), fmt.pct(e.get("pair_accuracy"), signed=True),
                     fmt.pct(e.get("accuracy"), signed=True)] for p, e in effect.items()]
            blocks: list = [Table(["protocol", "answers changed", "pairs", "questions"], rows),
                            Note("Corrected labels minus each protocol's own, in points "
                                 "(corrections.json, version "
                                 f"{metrics['corrections'].get('version')}: Index "
                                 f"{', '.join(metrics['corrections'].get('items', []))}; "
                                 "docs/mmvp.md gives each one's sources and evidence).")]
            if metrics.get("label_notes"):
                blocks.append(Items(list(metrics["label_notes"])))
            out.append(Section("What the label corrections change", blocks))
        unread = [[p, why, str(n)] for p, b in metrics.get("protocols", {}).items()
                  for why, n in b.get("unparsed", {}).items()]
        if unread:
            out.append(Section("Answers a protocol could not read (scored wrong)",
                               [Table(["protocol", "why", "answers"], unread, 2)]))
        patterns = self._pattern_rows(metrics)
        if patterns:
            out.append(Section("Per visual pattern, own labels (percent)", [
                Table(patterns[0], patterns[1:], 1),
                Note("Patterns are PixMMVP's tags (the MMVP authors publish none per "
                     "question); pair 94 has two tags and counts for neither.")]))
        control = controls.rows(view)
        if control:
            out.append(Section("Without the image, against chance", [
                Table(controls.HEADER, control, 2), Note(controls.NOTE)]))
        out.append(Section("Generation", [Items(tables.generation_lines(
            view.info.generation.model_dump()))]))
        return out

    @staticmethod
    def _pattern_rows(metrics: dict[str, Any]) -> list[list[str]]:
        blocks = [(p, b.get("per_pattern") or {}) for p, s, b in tables.rows(metrics)
                  if s == "original"]
        names = list(dict.fromkeys(n for _, cells in blocks for n in cells))
        if not names:
            return []
        header = ["pattern"] + [f"{p} {what}" for p, _ in blocks
                                for what in ("pairs", "questions")]
        return [header] + [[n] + [fmt.pct(cells.get(n, {}).get(k), missing="-")
                                  for _, cells in blocks
                                  for k in ("pair_accuracy", "accuracy")] for n in names]

    def unparsed(self, metrics: dict[str, Any]) -> int | None:
        """Answers a protocol could not read, over every protocol (the report's card)."""
        blocks = metrics.get("protocols")
        if not isinstance(blocks, dict):
            return None
        return sum(sum(b.get("unparsed", {}).values()) for b in blocks.values()
                   if isinstance(b, dict))

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        tables.show_main(view.metrics, view.model, console)
        tables.show_generation(view.info.generation.model_dump(), console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        from visioneval.benchmarks.mmvp import controls
        from visioneval.core.printed import print_table

        tables.show(view.metrics, view.model, console, view.info.generation.model_dump())
        control = controls.rows(view)
        if control:
            console.print()
            print_table(console, "Without the image, against chance", controls.HEADER,
                        control, controls.NOTE, numeric_from=2)

    # -- paired tests and chance --------------------------------------------------------------
    def paired_rows(self, record: Record) -> dict[str, Any]:
        """Each protocol's per-question verdict under each label set (the wild cluster
        bootstrap-t, clustered by pair: the paired test of pair accuracy's building
        blocks)."""
        protocol = record.metadata.get("prompt")
        pair = record.metadata.get("pair")
        if not isinstance(protocol, str) or pair is None:
            return {}
        rows = {}
        for label_set in ("original", "corrected"):
            score = record.scores.get(score_key(protocol, label_set))
            if score and "correct" in score:
                rows[f"{protocol} accuracy ({label_set} labels)"] = \
                    PairedRow("correct", (float(score["correct"]),), f"pair {pair}")
        return rows

    chance_rule = ("chance: one of the two options picked at random, 50% of questions (25% of "
                   "pairs, shown in the report's own control table)")

    def chance_rows(self, record: Record) -> dict[str, Any]:
        return {key: PairedRow("correct", (0.5,), row.cluster)
                for key, row in self.paired_rows(record).items()}

    def browser_row(self, record: Record) -> dict[str, Any]:
        meta = record.metadata
        target = record.target if isinstance(record.target, dict) else {}
        views = {p: {"a": str(record.parsed.get(p.split("/")[0], "")),
                     "ok": s.get("correct") == 1.0} for p, s in record.scores.items()}
        label = target.get("published", "")
        return {"t": f"Index {meta.get('index')}: {meta.get('question', '')} "
                     f"{meta.get('options', '')}",
                "labels": [f"({label})"] if label else [], "v": views,
                "meta": f"pair {meta.get('pair')}, {meta.get('prompt', '')} prompt, "
                        f"{meta.get('pattern') or 'no pattern'}"}

    # -- published numbers, compare, other tools' logs ---------------------------------------
    def published(self) -> PublishedTable:
        from visioneval.benchmarks.mmvp.published import table

        return table()

    def beside_published(self, view: ReadableRun) -> RunBeside:
        from visioneval.benchmarks.mmvp.published import beside

        return beside(view.info, view.metrics)

    def gap_headlines(self, metrics: dict[str, Any]) -> GapHeadlines | None:
        """Pair accuracy under each protocol: the paper's metric, lmms-eval's
        mmvp_pair_accuracy and VLMEvalKit's 'Overall' (`visioneval explain`)."""
        from visioneval.benchmarks.mmvp.published import COLUMN

        return gathered(COLUMN, "paper", PROTOCOLS, lambda protocol, labels: (
            dig(metrics, "protocols", protocol, labels), "pair_accuracy", "pair accuracy"))

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable:
        """Pair and per-question accuracy per protocol and label set, one row per model."""
        found = PercentRows()
        for view in views:
            for protocol in PROTOCOLS:
                blocks = (view.metrics.get("protocols") or {}).get(protocol)
                if isinstance(blocks, dict):
                    found.add(view, protocol, [(blocks.get(label_set) or {}, key)
                                               for label_set in ("original", "corrected")
                                               for key in ("pair_accuracy", "accuracy")])
        return found.table(self.name, ["Model", "Protocol", "pairs", "questions",
                                       "pairs (corrected)", "questions (corrected)"],
                           ["A run's protocols each read their own prompt's answers; its cost "
                            "is on each of its rows, spent once."])

    def foreign_logs(self) -> dict[str, ForeignReader]:
        """lmms-eval's mmvp samples logs and VLMEvalKit's prediction files
        (`visioneval rescore`)."""
        from visioneval.benchmarks.mmvp.lmms_eval import MmvpLmmsEval
        from visioneval.benchmarks.mmvp.vlmevalkit import MmvpVlmEvalKit

        return {"lmms-eval": MmvpLmmsEval(), "vlmevalkit": MmvpVlmEvalKit()}


DEFINITION = MmvpDefinition()


class RescoredMmvp(MmvpDefinition):
    """MMVP runs re-scored from another tool's log: shown like any MMVP run, rebuilt (report,
    compare) without data."""

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.mmvp.benchmark import scoring_only

        return scoring_only(options)


RESCORED = RescoredMmvp()
