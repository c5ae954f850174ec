"""How IllusionBench runs are shown: recall per protocol with deltas against the paper's own,
the shape-or-scene buckets, labels a prompt does not offer, and the compare table."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval import fmt
from visioneval.benchmarks.illusionbench import tables
from visioneval.benchmarks.illusionbench.metrics import IllusionBenchMetrics, image_key
from visioneval.benchmarks.illusionbench.options import IllusionBenchOptions
from visioneval.benchmarks.illusionbench.prompts import offered
from visioneval.benchmarks.illusionbench.spec import SUBSETS
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.blocks import Charts, ComparisonTable, Items, Note, Section, Table
from visioneval.core.figures import BarSeries, GroupedBars, Share, StackedShares, percent_interval
from visioneval.core.foreign import ForeignReader
from visioneval.core.headline import Headline
from visioneval.core.marks import Interval, percent
from visioneval.core.published import PublishedTable, RunBeside
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun
from visioneval.stats.paired import PairedRow


def _pct(value: float | None) -> str:
    return fmt.pct(value, missing="-")


def _scaled(value: float | None) -> float | None:
    return None if value is None else 100 * value


INTERVALS_NOTE = ("95% interval: bootstrap over samples (1000 seeded resamples) of each "
                  "protocol's overall recall (and of the original rule's other variant); "
                  "\"-\" with fewer than 2 scored samples.")


class IllusionBenchDefinition(BenchmarkDefinition):
    name = "illusionbench"
    summary = ("Evaluate a model on IllusionBench (arXiv 2411.06287) under the paper's and "
               "lmms-eval's scoring protocols, side by side.")
    options_model = IllusionBenchOptions
    metrics_model = IllusionBenchMetrics
    model_help = "Model name; builtin: random."
    max_tokens = 64
    max_tokens_help = "lmms-eval's max_new_tokens; enough for 'Answer: X'."
    synth_help = ("Write a small IllusionBench-shaped set (ICON, LOGO, IN) in the real schema "
                  "and names; 21 rows or more per subset cover every class.")
    synth_rows = 24
    settings_that_matter = ("protocol", "fix_quirks", "num_samples", "sample_seed", "tasks",
                            "subsets")

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.illusionbench.benchmark import build

        return build(options)

    def benchmark_class(self) -> type[Benchmark]:
        from visioneval.benchmarks.illusionbench.benchmark import IllusionBench

        return IllusionBench

    def headline(self, metrics: dict[str, Any]) -> Headline:
        from visioneval.benchmarks.illusionbench.headline import headline

        return headline(metrics)

    def synth(self, out: Path, rows: int, seed: int) -> list[str]:
        from visioneval.benchmarks.illusionbench.synth import write_synthetic

        return [f"{path}: {rows} rows ({subset})"
                for subset, path in write_synthetic(out, rows, seed).items()]

    def sections(self, view: ReadableRun) -> list[Section]:
        metrics = view.metrics
        protocols = list(metrics)
        subsets = [s for s in SUBSETS if any(s in p for p in metrics.values())]
        rows = [[r["subset"], r["label"], _pct(r["shape_recall"]),
                 fmt.interval(r["shape_ci95"]), fmt.pct(r["shape_delta"], signed=True),
                 _pct(r["scene_recall"]), fmt.interval(r["scene_ci95"]),
                 fmt.pct(r["scene_delta"], signed=True)] for r in tables.rows(metrics)]
        # The headline: the recall table, the protocols' shape and scene recall charted
        # beside it (same answers, each protocol's rule), then the note.
        drawn = []
        for task, label in (("shape", "shape recall"), ("scene", "scene recall")):
            series = [BarSeries(p, [_scaled(metrics[p].get(s, {}).get(f"{task}_recall"))
                                    for s in subsets],
                                [percent_interval(metrics[p].get(s, {}).get(task, {})
                                                  .get("recall_ci95")) for s in subsets])
                      for p in protocols]
            drawn.append(GroupedBars(f"{label} by protocol, same answers", subsets, series,
                                     "percent"))
        out = [Section("Recall by protocol (percent; delta against the original protocol)",
                       [Table(["subset", "protocol", "shape", "shape 95% interval", "Δ",
                               "scene", "scene 95% interval", "Δ"], rows, 2),
                        Charts(drawn), Note(INTERVALS_NOTE)])]
        pooled = tables.pooled_rows(metrics)
        if pooled:
            out.append(Section("Both tasks pooled (percent)", [
                Table(tables.POOLED_HEADER, pooled, 2), Note(tables.POOLED_NOTE)]))
        cats: list[str] = []
        parts = [Share("shape", []), Share("texture (scene)", []),
                 Share("named neither", [], miss=True)]
        for subset in subsets:
            dist = metrics.get("original", {}).get(subset, {}).get("distribution", {})
            for prompt in ("shape_prompt", "scene_prompt"):
                if "shape" in dist.get(prompt, {}):  # absent when no sample was scored
                    cats.append(f"{subset} {prompt.replace('_', ' ')}")
                    for part, key in zip(parts, ("shape", "texture", "rest"), strict=True):
                        part.percents.append(100 * dist[prompt][key])
        if cats:
            # Shape and scene are two answers, neither right nor wrong by itself (the right
            # one depends on the prompt): two neutral hues; naming neither is a miss: grey.
            out.append(Section("Shape or scene? (original rule's buckets)", [Charts([
                StackedShares("what the answers name, per prompt", cats, parts)])]))
        notes = [f"{s} {task} label '{label}' is not among the prompt's options"
                 for p in metrics.values() for s, block in p.items()
                 for task, labels in block.get("labels_not_offered", {}).items()
                 for label in labels]
        if notes:
            out.append(Section("Labels the prompts do not offer",
                               [Items(list(dict.fromkeys(notes)))]))
        return out

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        """Per subset and protocol, each task's recall with its 95% interval."""
        tables.show_main(view.metrics, view.model, console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        tables.show(view.metrics, view.model, console)

    def paired_rows(self, record: Record) -> dict[str, Any]:
        """Each rule's recall per subset and task (McNemar on correct answers), and both
        tasks together (clustered by image; shown where an image has both)."""
        task, image = record.metadata.get("task"), image_key(record)
        rows = {}
        for rule, score in record.scores.items():
            if "correct" in score:
                value = (float(score["correct"]),)
                rows[f"{record.group} {task} recall ({rule})"] = \
                    PairedRow("correct", value, image)
                # Both tasks together, as `pooled`: each image's two answers a cluster.
                rows[f"{record.group} both tasks recall ({rule})"] = \
                    PairedRow("correct", value, image, pooled=True)
        return rows

    chance_rule = ("chance: one of the options the prompt lists, picked at random, names the "
                   "right class (1/k for k options)")

    def chance_rows(self, record: Record) -> dict[str, Any]:
        """A uniform guess among the prompt's options, for each rule `paired_rows` names."""
        meta = record.metadata
        task, family, subset = meta.get("task"), meta.get("family"), meta.get("subset")
        if not (isinstance(task, str) and isinstance(family, str) and isinstance(subset, str)):
            return {}
        try:
            share = 1 / len(offered(family, subset, task))
        except KeyError:
            return {}
        rows = {}
        for rule, score in record.scores.items():
            if "correct" in score:
                rows[f"{record.group} {task} recall ({rule})"] = PairedRow("correct", (share,))
                rows[f"{record.group} both tasks recall ({rule})"] = \
                    PairedRow("correct", (share,), pooled=True)
        return rows

    def browser_row(self, record: Record) -> dict[str, Any]:
        meta = record.metadata
        target = record.target if isinstance(record.target, dict) else {}
        label = target.get(meta.get("task", "shape"), "")
        views = {p: {"a": str(record.parsed.get(p, "")), "ok": s.get("correct") == 1.0}
                 for p, s in record.scores.items()}
        return {"t": f"shape {target.get('shape')} / scene {target.get('scene')}",
                "labels": [label] if label else [], "v": views,
                "meta": f"{meta.get('task', '')} task, {meta.get('family', '')} prompt, "
                        f"{meta.get('difficulty', '')}"}

    def published(self) -> PublishedTable:
        from visioneval.benchmarks.illusionbench.published import table

        return table()

    def beside_published(self, view: ReadableRun) -> RunBeside:
        from visioneval.benchmarks.illusionbench.published import beside

        return beside(view.info, view.metrics)

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable:
        """Shape and scene recall per subset, one row per model and protocol."""
        protocols = list(dict.fromkeys(p for v in views for p in v.metrics))
        header = ["Model", "Protocol"]
        for subset in SUBSETS:
            header += [f"{subset} shape", f"{subset} scene"]
        rows, runs, intervals = [], [], []
        for view in views:
            for protocol in protocols:
                if protocol not in view.metrics:
                    continue
                row = [view.model, protocol]
                spans: list[Interval | None] = [None, None]
                for subset in SUBSETS:
                    block = view.metrics[protocol].get(subset, {})
                    row += [fmt.pct(block.get("shape_recall")),
                            fmt.pct(block.get("scene_recall"))]
                    spans += [percent((block.get(task) or {}).get("recall_ci95"))
                              for task in ("shape", "scene")]
                rows.append(row)
                runs.append(view)
                intervals.append(spans)
        return ComparisonTable(self.name, header, rows, [True] * (len(header) - 2),
                               runs=runs, intervals=intervals,
                               notes=["A run's protocols score the same answers: its cost is "
                                      "on each of its rows, spent once."])

    def foreign_logs(self) -> dict[str, ForeignReader]:
        """lmms-eval's illusionbench samples logs (`visioneval rescore --from lmms-eval`)."""
        from visioneval.benchmarks.illusionbench.lmms_eval import IllusionBenchLmmsEval

        return {"lmms-eval": IllusionBenchLmmsEval()}


DEFINITION = IllusionBenchDefinition()


class RescoredIllusionBench(IllusionBenchDefinition):
    """IllusionBench runs re-scored from another tool's log: shown like any IllusionBench
    run, rebuilt (report, compare) without data."""


    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.illusionbench.benchmark import scoring_only

        return scoring_only(options)


RESCORED = RescoredIllusionBench()
