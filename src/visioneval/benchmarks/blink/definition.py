"""How BLINK runs are shown: the mean over tasks and over questions per protocol and label
set, per task, why the protocols differ (macro against micro among them), what the label
corrections change, the published numbers and the compare table."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the
# benchmark's implementation behind it loads on first use.

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval.benchmarks.blink import tables
from visioneval.benchmarks.blink.metrics_model import BlinkMetrics
from visioneval.benchmarks.blink.options import BlinkOptions
from visioneval.benchmarks.blink.spec import MEAN_OVER_QUESTIONS, PROTOCOLS, score_key
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.blocks import ComparisonTable, Items, Note, PercentRows, Section, Table
from visioneval.core.foreign import ForeignReader
from visioneval.core.gap import GapHeadlines, Reported, dig, gathered
from visioneval.core.headline import Headline
from visioneval.core.published import PublishedTable, RunBeside
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun
from visioneval.fmt import pct
from visioneval.harness.differences import DifferenceSummary, section
from visioneval.stats.paired import PairedRow


class BlinkDefinition(BenchmarkDefinition):
    name = "blink"
    summary = ("Evaluate a model on BLINK (arXiv 2404.12390, 14 perception tasks, val) under "
               "the paper's, lmms-eval's and VLMEvalKit's protocols, side by side.")
    options_model = BlinkOptions
    metrics_model = BlinkMetrics
    model_help = "Model name; builtin: random."
    max_tokens = 1024
    max_tokens_help = "The paper's max_tokens (eval/query_model.py line 37); lmms-eval's too."
    synth_help = ("Write a small BLINK-shaped set (<Task>/val-*.parquet for the 14 tasks, "
                  "--n questions in the val split's proportions).")
    synth_rows = 28
    settings_that_matter = ("protocol", "labels", "tasks", "limit", "judge_model")
    judge_target = ("judge_base_url", "judge_api_key_env")

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.blink.benchmark import build

        return build(options)

    def benchmark_class(self) -> type[Benchmark]:
        from visioneval.benchmarks.blink.benchmark import Blink

        return Blink

    def headline(self, metrics: dict[str, Any]) -> Headline:
        from visioneval.benchmarks.blink.headline import headline

        return headline(metrics)

    def synth(self, out: Path, rows: int, seed: int) -> list[str]:
        from visioneval.benchmarks.blink.synth import write_synthetic

        counts = write_synthetic(out, rows, seed)
        return [f"{out}: {sum(counts.values())} questions over {len(counts)} tasks "
                "(<Task>/val-00000-of-00001.parquet)"]

    # -- what a run shows ---------------------------------------------------------------------
    def sections(self, view: ReadableRun) -> list[Section]:
        metrics = view.metrics
        out = [Section("Accuracy by protocol (percent)", [
            Table(tables.HEADER, tables.main_rows(metrics), 2), Note(tables.NOTE),
            Items([f"{p}: {how}" for p, how in (metrics.get("readings") or {}).items()]
                  + tables.judge_lines(metrics))])]
        if metrics.get("differences"):
            out.append(section(DifferenceSummary.model_validate(metrics["differences"])))
        header, found = tables.task_rows(metrics)
        if found:
            out.append(Section("Per task, published labels (percent)",
                               [Table(header, found, 1)]))
        corrections = metrics.get("corrections") or {}
        effect = corrections.get("effect")
        if effect:
            rows = [[p, str(e.get("changed", 0)), pct(e.get("macro"), signed=True),
                     pct(e.get("micro"), signed=True)] for p, e in effect.items()]
            out.append(Section("What the label corrections change", [
                Table(["protocol", "answers changed", "tasks", "questions"], rows),
                Note(f"corrections.json version {corrections.get('version')}: "
                     f"{len(corrections.get('items', []))} corrections (docs/blink.md says "
                     "what was searched and the Relative_Reflectance answers replaced on "
                     "the Hub).")]))
        unread = tables.unread_rows(metrics)
        if unread:
            out.append(Section("Answers a protocol could not read (scored wrong)",
                               [Table(["protocol", "why", "answers"], unread, 2)]))
        out.append(Section("Generation", [Items(tables.generation_lines(
            view.info.generation.model_dump()))]))
        return out

    def unparsed(self, metrics: dict[str, Any]) -> int | None:
        blocks = metrics.get("protocols")
        if not isinstance(blocks, dict):
            return None
        return sum(sum(b.get("unparsed", {}).values()) for b in blocks.values()
                   if isinstance(b, dict))

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        tables.show_main(view.metrics, view.model, console)
        tables.show_generation(view.info.generation.model_dump(), console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        tables.show(view.metrics, view.model, console, view.info.generation.model_dump())

    # -- paired tests and chance --------------------------------------------------------------
    def paired_rows(self, record: Record) -> dict[str, Any]:
        """Each protocol's per-question verdict under each label set (the wild cluster
        bootstrap-t, clustered by the question's first image)."""
        protocol = record.metadata.get("prompt")
        if not isinstance(protocol, str):
            return {}
        cluster = f"image {record.metadata.get('image', record.id)}"
        rows = {}
        for label_set in ("original", "corrected"):
            score = record.scores.get(score_key(protocol, label_set))
            if score and "correct" in score:
                rows[f"{protocol} accuracy ({label_set} labels)"] = \
                    PairedRow("correct", (float(score["correct"]),), cluster)
        return rows

    chance_rule = ("chance: one of the question's options picked at random, 1/number of "
                   "options per question (BLINK has 2, 3 or 4)")

    def chance_rows(self, record: Record) -> dict[str, Any]:
        options = len(record.metadata.get("choices") or ()) or 2
        return {key: PairedRow("correct", (1.0 / options,), row.cluster)
                for key, row in self.paired_rows(record).items()}

    def browser_row(self, record: Record) -> dict[str, Any]:
        meta = record.metadata
        views = {p: {"a": str(record.parsed.get(p.split("/")[0], "")),
                     "ok": s.get("correct") == 1.0} for p, s in record.scores.items()}
        return {"t": f"{meta.get('item')}: {meta.get('question', '')}",
                "labels": [str(meta.get("answer", ""))], "v": views,
                "meta": f"{meta.get('task')}, "
                        + (f"{meta['images']} images, " if meta.get("images") else "")
                        + f"{meta.get('prompt', '')} prompt"}

    def foreign_logs(self) -> dict[str, ForeignReader]:
        """lmms-eval's blink_* samples logs and VLMEvalKit's BLINK prediction files
        (`visioneval rescore`)."""
        from visioneval.benchmarks.blink.lmms_eval import BlinkLmmsEval
        from visioneval.benchmarks.blink.vlmevalkit import BlinkVlmEvalKit

        return {"lmms-eval": BlinkLmmsEval(), "vlmevalkit": BlinkVlmEvalKit()}

    # -- published numbers, compare ------------------------------------------------------------
    def gap_headlines(self, metrics: dict[str, Any]) -> GapHeadlines | None:
        """The mean of the 14 task accuracies (the paper's, and lmms-eval's blink group) and
        VLMEvalKit's 'Overall', the mean over questions (`visioneval explain`)."""

        def find(protocol: str, labels: str) -> Reported:
            block = dig(metrics, "protocols", protocol, labels)
            if protocol in MEAN_OVER_QUESTIONS:
                return block, "micro", "mean over questions"
            return block, "macro", "mean of task accuracies"

        return gathered("val", "paper", PROTOCOLS, find)

    def published(self) -> PublishedTable:
        from visioneval.benchmarks.blink.published import table

        return table()

    def beside_published(self, view: ReadableRun) -> RunBeside:
        from visioneval.benchmarks.blink.published import beside

        return beside(view.info, view.metrics)

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable:
        """The mean over tasks and over questions per protocol, one row per model."""
        found = PercentRows()
        for view in views:
            for protocol in PROTOCOLS:
                blocks = (view.metrics.get("protocols") or {}).get(protocol)
                if isinstance(blocks, dict):
                    found.add(view, protocol, [(blocks.get(label_set) or {}, key)
                                               for label_set in ("original", "corrected")
                                               for key in ("macro", "micro")])
        return found.table(self.name, ["Model", "Protocol", "tasks", "questions",
                                       "tasks (corrected)", "questions (corrected)"],
                           ["A run's protocols each read their own prompt's answers; its cost "
                            "is on each of its rows, spent once."])


DEFINITION = BlinkDefinition()


class RescoredBlink(BlinkDefinition):
    """BLINK runs re-scored from another tool's log: shown like any BLINK run, rebuilt
    (report, compare) without data."""

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.blink.benchmark import scoring_only

        return scoring_only(options)


RESCORED = RescoredBlink()
