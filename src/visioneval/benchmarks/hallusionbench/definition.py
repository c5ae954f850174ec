"""How HallusionBench runs are shown: the paper's leaderboard columns per protocol, why the
protocols differ, the categories, the yes/no bias and the figures' consistency, and the
compare table."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval import fmt
from visioneval.benchmarks.hallusionbench import tables
from visioneval.benchmarks.hallusionbench.items import Item
from visioneval.benchmarks.hallusionbench.options import HallusionBenchOptions
from visioneval.benchmarks.hallusionbench.schema import HallusionBenchMetrics
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.blocks import Charts, ComparisonTable, Items, Note, Section, Table
from visioneval.core.figures import BarSeries, GroupedBars, percent_interval
from visioneval.core.foreign import ForeignReader
from visioneval.core.gap import GapHeadlines, Reported, dig, gathered
from visioneval.core.headline import Headline
from visioneval.core.marks import Interval, percent
from visioneval.core.published import PublishedTable, RunBeside
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun
from visioneval.harness import differences
from visioneval.stats.paired import PairedRow

CHART_METRICS = tables.LEADERBOARD


class HallusionBenchDefinition(BenchmarkDefinition):
    name = "hallusionbench"
    summary = ("Evaluate a model on HallusionBench (CVPR 2024, arXiv 2310.14566) under the "
               "paper's, lmms-eval's and VLMEvalKit's protocols, side by side.")
    options_model = HallusionBenchOptions
    metrics_model = HallusionBenchMetrics
    model_help = "Model name; builtin: random (Yes or No, uniformly)."
    max_tokens = 128
    max_tokens_help = "lmms-eval's max_new_tokens; some questions ask for a sentence."
    synth_help = ("Write a small HallusionBench-shaped set (both splits, the real columns, "
                  "sets of figures and question groups); --n is the number of questions.")
    synth_rows = 60
    settings_that_matter = ("protocol", "labels", "num_samples", "judge_model",
                            "vlmevalkit_judge_model")
    judge_target = ("judge_base_url", "judge_api_key_env")

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.hallusionbench.benchmark import build

        return build(options)

    def benchmark_class(self) -> type[Benchmark]:
        from visioneval.benchmarks.hallusionbench.benchmark import HallusionBench

        return HallusionBench

    def headline(self, metrics: dict[str, Any]) -> Headline:
        from visioneval.benchmarks.hallusionbench.headline import headline

        return headline(metrics)

    def synth(self, out: Path, rows: int, seed: int) -> list[str]:
        from visioneval.benchmarks.hallusionbench.synth import write_synthetic

        return [f"{path}: {n} rows ({split})"
                for split, (path, n) in write_synthetic(out, rows, seed).items()]

    # -- the report and the terminal -----------------------------------------------------------
    def sections(self, view: ReadableRun) -> list[Section]:
        metrics = view.metrics
        series = []
        for label, block in tables.blocks(metrics):
            overall = block.get("overall", {})
            series.append(BarSeries(label, [_scaled(overall.get(m)) for m in CHART_METRICS],
                                    [percent_interval(overall.get(f"{m}_ci95"))
                                     for m in CHART_METRICS]))
        out = [Section("The paper's leaderboard, per protocol (percent)", [
            Table(tables.LEADERBOARD_HEADER, tables.leaderboard_rows(metrics), 1),
            Charts([GroupedBars("the same answers, each protocol's reading and questions",
                                list(CHART_METRICS), series, "percent")]),
            Note(tables.INTERVAL_NOTE + " easy/hard: question pairs on original / edited "
                 "figures."), *([Items(tables.notes(metrics))] if tables.notes(metrics)
                                else [])])]
        if metrics.get("differences"):
            out.append(differences.section(
                differences.DifferenceSummary.model_validate(metrics["differences"])))
        for title, key in (("By category (percent)", "by_category"),
                           ("By subcategory (percent)", "by_subcategory")):
            out.append(Section(title, [Table(tables.SCOPE_HEADER,
                                             tables.scope_rows(metrics, key), 2)]))
        bias = tables.yes_no_rows(metrics)
        if bias:
            out.append(Section("Yes/no bias, the paper's protocol (percent)",
                               [Table(["", "value"], bias, 1)]))
        out.append(Section("Figures: every question right, some, none (percent)",
                           [Table(tables.FIGURE_HEADER, tables.figure_rows(metrics), 1)]))
        out.append(Section("Protocols and labels", [Items(
            [tables.LEGEND[p] for p in metrics.get("protocols", {}) if p in tables.LEGEND]
            + _label_lines(metrics))]))
        return out

    def unparsed(self, metrics: dict[str, Any]) -> int | None:
        """Answers the first protocol could not call yes or no (its grader's "unclear")."""
        first = next(iter((metrics.get("protocols") or {}).values()), None)
        return first.get("unclear") if isinstance(first, dict) else None

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        """The paper's leaderboard columns per protocol, then why the protocols differ."""
        tables.show_main(view.metrics, view.model, console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        tables.show(view.metrics, view.model, console)

    def browser_row(self, record: Record) -> dict[str, Any]:
        meta = record.metadata
        target = record.target if isinstance(record.target, dict) else {}
        answer = "yes" if target.get("gt_answer") == "1" else "no"
        views = {p: {"a": str(record.parsed.get(p, "")), "ok": s.get("correct") == 1.0}
                 for p, s in record.scores.items()}
        figure = "no figure" if meta.get("visual_input") == "0" else \
            f"figure {meta.get('figure_id')}" + (" (edited)" if meta.get("visual_input") == "2"
                                                 else "")
        return {"t": f"{answer}: {target.get('gt_answer_details', '')}", "labels": [answer],
                "v": views, "meta": f"{meta.get('category')} {meta.get('subcategory')}, set "
                                    f"{meta.get('set_id')}, {figure}, question "
                                    f"{meta.get('question_id')}"}

    # -- compare, chance -------------------------------------------------------------------
    def paired_rows(self, record: Record) -> dict[str, Any]:
        """Each protocol's verdict per question (the wild cluster bootstrap-t, clustered by
        set: a set's figures and question groups move together)."""
        meta = record.metadata or {}
        cluster = _set_of(meta)
        rows = {}
        for protocol, score in record.scores.items():
            if "correct" in score:
                rows[f"aAcc ({protocol})"] = PairedRow("correct", (float(score["correct"]),),
                                                       cluster)
                category = meta.get("category")
                if category:
                    rows[f"{category} aAcc ({protocol})"] = PairedRow(
                        "correct", (float(score["correct"]),), cluster)
        return rows

    chance_rule = ("chance: a yes or a no picked at random is right on half the questions "
                   "(50% aAcc); VS questions can be answered from knowledge alone, VD ones "
                   "cannot")

    def chance_rows(self, record: Record) -> dict[str, Any]:
        """A uniform yes/no guess: right half the time, for each row `paired_rows` names."""
        return {key: PairedRow("correct", (0.5,)) for key in self.paired_rows(record)}

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable:
        """The leaderboard's columns, one row per model and protocol."""
        header = ["Model", "Protocol", *CHART_METRICS]
        rows, runs, intervals = [], [], []
        for view in views:
            for label, block in tables.blocks(view.metrics):
                overall = block.get("overall", {})
                rows.append([view.model, label,
                             *(fmt.pct(overall.get(m)) for m in CHART_METRICS)])
                runs.append(view)
                spans: list[Interval | None] = [None, None]
                spans += [percent(overall.get(f"{m}_ci95")) for m in CHART_METRICS]
                intervals.append(spans)
        return ComparisonTable(self.name, header, rows, [True] * len(CHART_METRICS),
                               runs=runs, intervals=intervals,
                               notes=["A run's protocols score the same answers: its cost is "
                                      "on each of its rows, spent once."])

    # -- published numbers, other tools' logs --------------------------------------------------
    def gap_headlines(self, metrics: dict[str, Any]) -> GapHeadlines | None:
        """aAcc (every question) under each protocol: the paper's, lmms-eval's aAcc and
        VLMEvalKit's 'Overall' aAcc (`visioneval explain`)."""
        from visioneval.benchmarks.hallusionbench.spec import PROTOCOLS

        sets = dig(metrics, "labels", "sets")
        first = sets[0] if isinstance(sets, list) and sets else "original"

        def find(protocol: str, labels: str) -> Reported:
            # `protocols` holds the first label set scored (the corrected one alone with
            # --labels corrected), `corrected` the second
            where = ("protocols", protocol) if labels == first else ("corrected", protocol)
            return dig(metrics, *where, "overall"), "aAcc", "aAcc"

        return gathered("paper/aAcc", "paper", PROTOCOLS, find)

    def published(self) -> PublishedTable:
        from visioneval.benchmarks.hallusionbench.published import table

        return table()

    def beside_published(self, view: ReadableRun) -> RunBeside:
        from visioneval.benchmarks.hallusionbench.published import beside

        return beside(view.info, view.metrics)

    def foreign_logs(self) -> dict[str, ForeignReader]:
        """lmms-eval's hallusion_bench_image samples logs and VLMEvalKit's prediction files
        (`visioneval rescore`)."""
        from visioneval.benchmarks.hallusionbench.lmms_eval import HallusionBenchLmmsEval
        from visioneval.benchmarks.hallusionbench.vlmevalkit import HallusionBenchVlmEvalKit

        return {"lmms-eval": HallusionBenchLmmsEval(),
                "vlmevalkit": HallusionBenchVlmEvalKit()}


def _scaled(value: float | None) -> float | None:
    return None if value is None else 100 * value


def _set_of(meta: dict[str, Any]) -> str | None:
    try:
        return Item.from_metadata(meta).set_key
    except KeyError:
        return None


def _label_lines(metrics: dict[str, Any]) -> list[str]:
    labels = metrics.get("labels") or {}
    out = [f"labels: corrections manifest {labels.get('manifest')}, "
           f"{labels.get('corrections', 0)} corrections; "
           f"{labels.get('items_corrected', 0)} items of this run corrected"]
    if labels.get("corrected_note"):
        out.append(f"labels: {labels['corrected_note']}")
    return out


DEFINITION = HallusionBenchDefinition()


class RescoredHallusionBench(HallusionBenchDefinition):
    """HallusionBench runs re-scored from another tool's log: shown like any HallusionBench
    run, rebuilt (report, compare) without data."""

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.hallusionbench.benchmark import scoring_only

        return scoring_only(options)


RESCORED = RescoredHallusionBench()
