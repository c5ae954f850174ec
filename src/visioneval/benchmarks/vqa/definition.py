"""How runs of the generic image-question benchmark are shown: the results table (overall and
per group), a chart of accuracy per group, sample-browser rows and a compare table."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval import fmt
from visioneval.benchmarks.vqa import tables
from visioneval.benchmarks.vqa.metrics import VqaMetrics
from visioneval.benchmarks.vqa.options import VqaOptions
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.blocks import Charts, ComparisonTable, Note, Section, Table
from visioneval.core.figures import BarSeries, GroupedBars, percent_interval
from visioneval.core.headline import Headline, from_block
from visioneval.core.marks import percent
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun
from visioneval.terminal import line

NOTES = {
    "exact": "exact: the answer equals the target (or one of the targets) once both are "
             "lowercased, stripped of punctuation at the ends and of the articles a/an/the.",
    "choice": "choice: the option the answer names, by its letter or its text (rules in "
              "docs/vqa.md); an answer naming two options is ambiguous and counts as unparsed.",
    "set": "set: comma-separated labels, normalised as for exact; EM is the exact match of "
           "the label sets, macro F1 the mean of per-label F1 (SalBench's metrics).",
    "number": "number: the first number in the answer (digits, or a number word up to "
              "twenty) within the relative tolerance of the target.",
}


def _pct(value: float | None) -> str:
    return fmt.pct(value, missing="-")


class VqaDefinition(BenchmarkDefinition):
    name = "vqa"
    summary = ("Evaluate a model on any image-question dataset (parquet, JSONL, CSV or a "
               "Hugging Face Hub id) with an exact, multiple-choice, label-set or number scorer.")
    options_model = VqaOptions
    metrics_model = VqaMetrics
    model_help = "Model name; builtin: random (with --scorer choice)."
    builtin_note = "random answers with --scorer choice: one of the options, at random"
    settings_that_matter = ("scorer", "image_col", "question_col", "answer_col",
                            "choices_col", "split", "num_samples", "prompt_suffix", "tolerance")
    judge_target = ("judge_base_url", "judge_api_key_env")
    trust_options = ("allow_outside_images",)

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.vqa.benchmark import build

        return build(options)

    def benchmark_class(self) -> type[Benchmark]:
        from visioneval.benchmarks.vqa.benchmark import Vqa

        return Vqa

    def headline(self, metrics: dict[str, Any]) -> Headline:
        """Accuracy over every scored answer, naming the scorer that judged them."""
        return from_block(f"accuracy ({metrics.get('scorer', '?')} scorer)",
                          metrics.get("overall"), "accuracy")

    def sections(self, view: ReadableRun) -> list[Section]:
        metrics = view.metrics
        scorer = metrics.get("scorer", "?")
        header = ["group", "n", "errors", "unparsed", "ambiguous", "accuracy",
                  "accuracy 95% interval"]
        if scorer == "set":
            header += ["EM", "macro F1", "sample F1"]
        rows = []
        for name, block in tables.blocks(metrics):
            row = [name, block.get("n", 0), block.get("n_errors", 0),
                   block.get("n_unparsed", 0), block.get("n_ambiguous", 0),
                   _pct(block.get("accuracy")), fmt.interval(block.get("accuracy_ci95"))]
            if scorer == "set":
                row += [_pct(block.get(k)) for k in ("exact_match", "macro_f1", "sample_f1")]
            rows.append(row)
        notes = [Note(NOTES.get(scorer, "")),
                 Note("n counts scored answers; failed requests are errors, left out of "
                      "every score. Unparsed answers count as wrong for accuracy."),
                 Note("95% interval: bootstrap over samples (1000 seeded resamples); \"-\" "
                      "with fewer than 2 scored samples.")]
        # The headline: the table, the chart of accuracy per group beside it, the notes.
        chart: list[Charts] = []
        groups = metrics.get("groups", {})
        if len(groups) > 1:
            names = list(groups)
            accuracy = [None if groups[g].get("accuracy") is None
                        else 100 * groups[g]["accuracy"] for g in names]
            spans = [percent_interval(groups[g].get("accuracy_ci95")) for g in names]
            chart.append(Charts([GroupedBars(
                f"{scorer} accuracy per group", names, [BarSeries("accuracy", accuracy, spans)],
                "percent")]))
        return [Section("Results (percent)", [Table(header, rows), *chart, *notes])]

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        tables.show(view.metrics, view.model, console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        """The main table, then what its scorer does."""
        tables.show(view.metrics, view.model, console)
        note = NOTES.get(view.metrics.get("scorer", ""))
        if note:
            line(console, note, style="dim")

    def browser_row(self, record: Record) -> dict[str, Any]:
        """The target and the answer read (for choice, letter and option text); the
        labels filter is the target option's letter (choice) to spot a letter bias."""
        scorer = next(iter(record.scores), None) or next(iter(record.parsed), "answer")
        parsed = record.parsed.get(scorer)
        choices = record.metadata.get("choices") or []
        block = record.scores.get(scorer, {})
        if parsed is None:
            shown = "(ambiguous)" if block.get("ambiguous") else "(unparsed)"
        elif isinstance(parsed, list):
            shown = ", ".join(map(str, parsed))
        else:
            shown = _option(parsed, choices) if scorer == "choice" else str(parsed)
        target = record.target
        labels: list[str] = []
        if scorer == "choice" and isinstance(target, str):
            labels = [target]
            target = _option(target, choices)
        correct = block.get("correct")
        views = {scorer: {"a": shown, "ok": None if correct is None else correct == 1.0}}
        return {"t": str(target), "labels": labels, "v": views,
                "meta": f"{record.metadata.get('file', '')} row {record.metadata.get('row')}"}

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable:
        """Accuracy (and unparsed share) per model and scorer, overall and per group."""
        groups = list(dict.fromkeys(g for v in views for g in v.metrics.get("groups", {})))
        groups = groups if len(groups) > 1 else []
        set_runs = any(v.metrics.get("scorer") == "set" for v in views)
        header = ["Model", "Scorer", "Accuracy", "Unparsed"]
        better = [True, False]
        if set_runs:
            header += ["Macro F1"]
            better += [True]
        header += [f"{g} accuracy" for g in groups]
        better += [True] * len(groups)
        rows, runs, intervals = [], [], []
        for view in sorted(views, key=lambda v: (v.model, v.metrics.get("scorer", ""))):
            overall = view.metrics.get("overall", {})
            n = overall.get("n", 0)
            row = [view.model, str(view.metrics.get("scorer", "?")),
                   fmt.pct(overall.get("accuracy")),
                   fmt.pct(overall.get("n_unparsed", 0) / n) if n else ""]
            spans = [None, None, percent(overall.get("accuracy_ci95")), None]
            if set_runs:
                row.append(fmt.pct(overall.get("macro_f1")))
                spans.append(percent(overall.get("macro_f1_ci95")))
            blocks = [view.metrics.get("groups", {}).get(g, {}) for g in groups]
            row += [fmt.pct(block.get("accuracy")) for block in blocks]
            spans += [percent(block.get("accuracy_ci95")) for block in blocks]
            rows.append(row)
            runs.append(view)
            intervals.append(spans)
        return ComparisonTable(self.name, header, rows, better, runs=runs,
                               intervals=intervals)

    def unparsed(self, metrics: dict[str, Any]) -> int | None:
        return metrics.get("overall", {}).get("n_unparsed")


def _option(letter: str, choices: list[str]) -> str:
    """"B. red" for the letter of an option; the letter alone when it names none."""
    index = ord(letter) - ord("A") if len(letter) == 1 else -1
    return f"{letter}. {choices[index]}" if 0 <= index < len(choices) else letter


DEFINITION = VqaDefinition()
