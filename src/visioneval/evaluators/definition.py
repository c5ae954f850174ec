"""How `visioneval evaluate` runs are shown: pass rate and mean score per evaluator, a chart,
each case's results, and a compare table of pass rates."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval import fmt
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.blocks import Charts, ComparisonTable, Note, Section, Table
from visioneval.core.figures import RateBars, percent_interval
from visioneval.core.headline import Headline, from_block
from visioneval.core.marks import percent
from visioneval.core.printed import print_table
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun
from visioneval.evaluators import card
from visioneval.evaluators.commandline import COMMAND_LINE
from visioneval.evaluators.metrics import EvaluateMetrics, EvaluatorMetrics
from visioneval.evaluators.options import EvaluateOptions, PanelJudge
from visioneval.terminal import line
from visioneval.validators.result import EvalResult


def _pct(value: float | None) -> str:
    return fmt.pct(value, missing="-")


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


class EvaluateDefinition(BenchmarkDefinition):
    name = "evaluate"
    metrics_model = EvaluateMetrics
    summary = "Grade answers about images with rubric judges and code validators."
    options_model = EvaluateOptions
    command_line = COMMAND_LINE  # the judge's --judge-* flags, the case file as argument
    settings_that_matter = ("judge_samples", "judge_temperature", "panel_score")
    trust_options = ("allow_scripts", "allow_outside_images")
    target_flags = ("--judge-base-url", "--judge-api-key-env")

    def resumed_options(self, options: dict[str, Any], given: Mapping[str, Any]
                        ) -> dict[str, Any]:
        """Judges 2, 3 ... on servers of their own are named again (`panel.resumed_panel`),
        as the run's model is."""
        from visioneval.evaluators.panel import resumed_panel

        kept = [PanelJudge.model_validate(p) for p in options.get("panel") or ()]
        if kept:
            panel = resumed_panel(kept, given.get("panel_urls") or (),
                                  given.get("panel_keys") or ())
            options = options | {"panel": [p.model_dump() for p in panel]}
        return options

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.evaluators.evaluate import build

        return build(options)

    def build_to_read(self, options: dict[str, Any]) -> Benchmark:
        """Without the case file's scripts or images outside its folder, whatever run.json
        says (`--allow-scripts` and `--allow-outside-images` are for runs the user starts)."""
        from visioneval.evaluators.evaluate import build

        return build(options, reading=True)

    def headline(self, metrics: dict[str, Any]) -> Headline:
        """The first evaluator's pass rate over the results it processed (errors left
        out), with its interval; the label says how many more evaluators the report has."""
        evaluators = [k for k, b in (metrics.get("evaluators") or {}).items()
                      if isinstance(b, dict)]
        if not evaluators:
            return Headline("pass rate", unavailable="no evaluator in metrics.json")
        block = metrics["evaluators"][evaluators[0]]
        more = f"; +{len(evaluators) - 1} evaluators" if len(evaluators) > 1 else ""
        found = from_block(f"pass rate, {evaluators[0]}{more}", block, "pass_rate")
        processed = block.get("processed")
        return replace(found, n=processed) if isinstance(processed, int) else found

    def sections(self, view: ReadableRun) -> list[Section]:
        evaluators = view.metrics.get("evaluators", {})
        rows = [[label, b["n"], b["passed"], _pct(b.get("pass_rate")),
                 fmt.interval(b.get("pass_rate_ci95")), _score(b.get("mean_score")),
                 b["errors"]] for label, b in evaluators.items()]
        # The headline: the table, the chart of pass rates beside it, the note.
        chart: list[Charts] = []
        labels = list(evaluators)
        if labels:
            rates = [None if (r := evaluators[k].get("pass_rate")) is None else 100 * r
                     for k in labels]
            spans = [percent_interval(evaluators[k].get("pass_rate_ci95")) for k in labels]
            chart.append(Charts([RateBars("pass rate per evaluator (errors excluded)", labels,
                                          rates, spans)]))
        out = [Section("Evaluators", [
            Table(["evaluator", "n", "passed", "pass rate %", "pass rate 95% interval",
                   "mean score", "errors"], rows), *chart,
            Note("Pass rate over processed results (errors excluded). 95% interval: "
                 "bootstrap over samples (1000 seeded resamples); \"-\" with fewer than 2 "
                 "processed results."),
            *card.variation_blocks({label: EvaluatorMetrics.model_validate(block)
                                    for label, block in evaluators.items()
                                    if "judge_variation" in block})])]
        cases = view.metrics.get("cases", {})
        rows = [[case, "yes" if b["passed_all"] else "no", _score(b["mean_score"]),
                 ", ".join(_result_cell(k, v) for k, v in b["evaluators"].items())]
                for case, b in cases.items()]
        out.append(Section("Cases", [Table(["case", "all passed", "mean score", "results"],
                                           rows)]))
        judges = card.judges_of(view.metrics)
        if judges is not None:
            out[1:1] = card.sections(judges, view.model)
        return out

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        """Per evaluator: pass rate with its 95% interval, mean score, errors; a judge card
        that raised flags is named in one line (the cards: `visioneval show`), and so are
        human labels the run had no use for; a judge asked several times per case says how
        much of its score's uncertainty is its own call-to-call variation."""
        rows = []
        for label, block in view.metrics["evaluators"].items():
            rate, mean = block.get("pass_rate"), block.get("mean_score")
            shown = _pct(rate)
            if rate is not None and block.get("pass_rate_ci95"):
                shown += f" [{fmt.interval(block['pass_rate_ci95'], joiner=', ')}]"
            rows.append([label, str(block["n"]), str(block["passed"]), shown,
                         "-" if mean is None else f"{mean:.3f}", str(block["errors"])])
        print_table(console, "Evaluators", ["evaluator", "n", "passed", "pass rate % [95%]",
                                            "score", "errors"], rows,
                    "Pass rate over processed results (errors excluded); [95%]: bootstrap "
                    "over samples, 1000 seeded resamples. score: the mean score.")
        judges = card.judges_of(view.metrics)
        if judges is not None:
            for found in judges.cards:
                if found.flags:
                    line(console, f"{card.name(found, view.model)}: {len(found.flags)} "
                                  f"flag{'s' if len(found.flags) != 1 else ''} on its judge "
                                  "card", style="red")
            unused = judges.human_labels.unused_line() if judges.human_labels else None
            if unused:  # rows of a labels file this run has no use for, said not dropped
                line(console, unused, style="yellow")
            for text in card.variation_lines(judges, view.model):
                line(console, text)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        """The evaluators' table, then each judge's card."""
        self.print_main_table(view, console)
        judges = card.judges_of(view.metrics)
        if judges is not None:
            card.print_cards(judges, view.model, console)

    def browser_row(self, record: Record) -> dict[str, Any]:
        result = record.parsed.get("result", {})
        status = result.get("status", "error")
        ok = result.get("passed") if status == "processed" else None
        answer = (f"{status}, score {result['score']:.3f}" if result.get("score") is not None
                  else f"{status}: {result.get('details', {}).get('error', '')}")
        row = {"t": f"case {record.metadata.get('case')}", "labels": [record.group],
               "v": {"result": {"a": answer, "ok": ok}}}
        if record.response.source == "code" and record.response.error is None:
            # A validator has no reply: its "raw response" is its result, as its command
            # prints it (what older runs kept as the response text).
            from visioneval.excerpts import capped

            row["r"] = capped(EvalResult.model_validate(result).model_dump_json())
        return row

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable:
        """Pass rate per evaluator, one row per judge model and run."""
        labels = list(dict.fromkeys(k for v in views for k in v.metrics.get("evaluators", {})))
        header = ["Judge", "Run", *[f"{k} pass %" for k in labels]]
        rows, intervals = [], []
        for view in views:
            blocks = view.metrics.get("evaluators", {})
            rows.append([card.judges_named(view), view.directory.name,
                         *[fmt.pct(blocks.get(k, {}).get("pass_rate")) for k in labels]])
            intervals.append([None, None, *[percent(blocks.get(k, {}).get("pass_rate_ci95"))
                                            for k in labels]])
        judges = card.comparison_section(views)
        return ComparisonTable(self.name, header, rows, [True] * len(labels),
                               runs=list(views), intervals=intervals,
                               sections=[judges] if judges is not None else [])


def _result_cell(label: str, result: dict[str, Any]) -> str:
    if result["status"] != "processed":
        return f"{label}: {result['status']}"
    return f"{label}: {result['score']:.2f} {'pass' if result['passed'] else 'fail'}"


DEFINITION = EvaluateDefinition()
