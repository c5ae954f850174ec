"""How CV-Bench runs are shown: every figure per protocol and label set (the paper's
combined score first), per task, why the protocols differ, the image controls against
chance, the published numbers and the compare table."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the
# benchmark's implementation behind it loads on first use.

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval import fmt
from visioneval.benchmarks.cvbench import tables
from visioneval.benchmarks.cvbench.metrics import CvBenchMetrics
from visioneval.benchmarks.cvbench.options import CvBenchOptions
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.blocks import ComparisonTable, Items, Note, PercentRows, Section, Table
from visioneval.core.foreign import ForeignReader
from visioneval.core.gap import GapHeadlines, Reported, dig, gathered
from visioneval.core.headline import Headline
from visioneval.core.published import PublishedTable, RunBeside
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun
from visioneval.harness.differences import DifferenceSummary, section
from visioneval.stats.paired import PairedRow

FIGURES = ("cv_bench", "overall_2d", "overall_3d", "accuracy")


class CvBenchDefinition(BenchmarkDefinition):
    name = "cvbench"
    summary = ("Evaluate a model on CV-Bench (Cambrian-1, arXiv 2406.16860): 2D, 3D and the "
               "combined score under the paper's, lmms-eval's and VLMEvalKit's protocols.")
    options_model = CvBenchOptions
    metrics_model = CvBenchMetrics
    model_help = "Model name; builtin: random."
    max_tokens = 512
    max_tokens_help = ("The paper's max_new_tokens (eval/eval/ade/ade_eval.py:140); "
                       "lmms-eval uses 1024.")
    synth_help = ("Write a small CV-Bench-shaped set (test.parquet: two questions per "
                  "image, ADE20K, COCO and Omni3D) in the Hub's schema.")
    synth_rows = 60
    settings_that_matter = ("protocol", "labels", "num_samples", "judge_model")
    judge_target = ("judge_base_url", "judge_api_key_env")

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.cvbench.benchmark import build

        return build(options)

    def benchmark_class(self) -> type[Benchmark]:
        from visioneval.benchmarks.cvbench.benchmark import CvBench

        return CvBench

    def headline(self, metrics: dict[str, Any]) -> Headline:
        from visioneval.benchmarks.cvbench.headline import headline

        return headline(metrics)

    def synth(self, out: Path, rows: int, seed: int, options: BaseModel | None = None
              ) -> list[str]:
        from visioneval.benchmarks.cvbench.synth import write_synthetic

        path = write_synthetic(out, rows, seed)
        return [f"{path}: {rows} items ({(rows + 1) // 2} images)"]

    # -- the report ------------------------------------------------------------------------
    def sections(self, view: ReadableRun) -> list[Section]:
        metrics = view.metrics
        out = []
        for label_set, per in (metrics.get("results") or {}).items():
            rows = [tables.row(p, b) for p, b in per.items()]
            out.append(Section(f"CV-Bench, {tables.LABEL_NAMES[label_set]} (percent)", [
                Table(tables.HEADER, rows, 1), Note(tables.NOTE), Note(tables.REPORTS),
                *([Note(judged)] if (judged := tables.judge_line(metrics)) else [])]))
        moves = [f"{p}, corrected minus published labels: " + ", ".join(
            f"{k} {fmt.pct(v, signed=True)}" for k, v in m.items())
            for p, m in (metrics.get("label_set_difference") or {}).items()]
        corrections = metrics.get("corrections") or {}
        out.append(Section("Label corrections", [Items(
            [f"corrections.json version {corrections.get('version')}: "
             f"{corrections.get('listed', 0)} corrections (none is known; docs/cvbench.md "
             "says what was searched)", *moves])]))
        if metrics.get("differences"):
            out.append(section(DifferenceSummary.model_validate(metrics["differences"])))
        tasks = tables.task_rows(metrics)
        if tasks:
            out.append(Section("Per task (percent)", [Table(tables.TASK_HEADER, tasks, 1)]))
        controls = tables.control_rows(metrics)
        if controls:
            out.append(Section("Without the image, against chance (percent)", [
                Table(tables.CONTROL_HEADER, controls, 2),
                Note("chance: the mean of 1/(number of options) over the items.")]))
        return out

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        tables.show_main(view.metrics, view.model, console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        tables.show(view.metrics, view.model, console)

    def unparsed(self, metrics: dict[str, Any]) -> int | None:
        """Answers a protocol read no option from, over every protocol (the report's card)."""
        label_sets = metrics.get("label_sets") or []
        if not label_sets:
            return None
        per = (metrics.get("results") or {}).get(label_sets[0]) or {}
        return sum(int(b.get("unparsed", 0)) for b in per.values() if isinstance(b, dict))

    # -- records ---------------------------------------------------------------------------
    def paired_rows(self, record: Record) -> dict[str, Any]:
        """Each protocol's per-item verdict (McNemar), items on one image one cluster."""
        image = record.metadata.get("image_key")
        return {f"accuracy ({key})": PairedRow("correct", (float(score["correct"]),),
                                               image if isinstance(image, str) else None)
                for key, score in record.scores.items() if "correct" in score}

    chance_rule = ("chance: one of the item's options picked at random, 1/(number of "
                   "options) per item (2, 4 or 6 options)")

    def chance_rows(self, record: Record) -> dict[str, Any]:
        options = len(record.metadata.get("choices") or ()) or 2
        image = record.metadata.get("image_key")
        return {f"accuracy ({key})": PairedRow("correct", (1 / options,),
                                               image if isinstance(image, str) else None)
                for key, score in record.scores.items() if "correct" in score}

    def browser_row(self, record: Record) -> dict[str, Any]:
        meta = record.metadata
        target = record.target if isinstance(record.target, dict) else {}
        views = {p: {"a": str(record.parsed.get(p, "")), "ok": s.get("correct") == 1.0}
                 for p, s in record.scores.items() if "correct" in s}
        labels = [f"({v})" for v in dict.fromkeys(target.values()) if v]
        choices = " ".join(f"({chr(65 + i)}) {c}"
                           for i, c in enumerate(meta.get("choices") or ()))
        return {"t": f"idx {meta.get('idx')}: {meta.get('question', '')} {choices}",
                "labels": labels, "v": views,
                "meta": f"{meta.get('source', '')} {meta.get('task', '')}, "
                        f"{meta.get('protocol', '')} prompt"}

    def gap_headlines(self, metrics: dict[str, Any]) -> GapHeadlines | None:
        """The paper's combined score (the mean of 2D and 3D) and lmms-eval's cv_bench, the
        mean over questions; VLMEvalKit reports 2D and 3D apart, so its readings are
        combined by the paper's formula (`visioneval explain`), whose weights per source
        the units' strata take."""
        from visioneval.benchmarks.cvbench.spec import MICRO, PROTOCOLS, SOURCE_WEIGHTS

        def find(protocol: str, labels: str) -> Reported:
            block = dig(metrics, "results", labels, protocol)
            if protocol == MICRO:
                return block, "accuracy", "mean over questions"
            if protocol == "vlmevalkit":
                return block, "cv_bench", "2D and 3D mean (VLMEvalKit reports them apart)"
            return block, "cv_bench", "2D and 3D mean"

        found = gathered("cv_bench", "paper", PROTOCOLS, find)
        if found is not None:
            found.weights.update({(h.protocol, h.labels): dict(SOURCE_WEIGHTS)
                                  for h in found.headlines if h.protocol != MICRO})
        return found

    def published(self) -> PublishedTable:
        from visioneval.benchmarks.cvbench.published import table

        return table()

    def beside_published(self, view: ReadableRun) -> RunBeside:
        from visioneval.benchmarks.cvbench.published import beside

        return beside(view.info, view.metrics)

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable:
        """CV-Bench, 2D, 3D and the mean over items per run and protocol, first label
        set."""
        found = PercentRows(missing="-")
        for view in views:
            label_sets = view.metrics.get("label_sets") or []
            if not label_sets:
                continue
            per = (view.metrics.get("results") or {}).get(label_sets[0], {})
            suffix = "" if label_sets[0] == "original" else " (corrected)"
            for protocol, block in per.items():
                found.add(view, protocol + suffix, [(block, f) for f in FIGURES])
        return found.table(self.name, ["Model", "Protocol", "CV-Bench", "2D", "3D", "all items"],
                           ["A run's protocols each read the answers to their own prompt; its "
                            "cost is on each row, spent once."])

    def foreign_logs(self) -> dict[str, ForeignReader]:
        """lmms-eval's cv_bench samples logs and VLMEvalKit's CV-Bench-2D and CV-Bench-3D
        prediction files (`visioneval rescore`)."""
        from visioneval.benchmarks.cvbench.lmms_eval import CvBenchLmmsEval
        from visioneval.benchmarks.cvbench.vlmevalkit import CvBenchVlmEvalKit

        return {"lmms-eval": CvBenchLmmsEval(), "vlmevalkit": CvBenchVlmEvalKit()}


DEFINITION = CvBenchDefinition()


class RescoredCvBench(CvBenchDefinition):
    """CV-Bench runs re-scored from another tool's log: shown like any CV-Bench run,
    rebuilt (report, compare) without data."""

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.cvbench.benchmark import scoring_only

        return scoring_only(options)


RESCORED = RescoredCvBench()
