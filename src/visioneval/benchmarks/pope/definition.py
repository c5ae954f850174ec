"""How POPE runs are shown: the paper's table first, the harnesses' reading of the same
questions, why they differ, RePOPE's corrected labels; the report, compare and published
numbers; the blind control against chance."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the
# benchmark's implementation behind it loads on first use.

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval import fmt
from visioneval.benchmarks.pope.options import PopeOptions
from visioneval.benchmarks.pope.schema import PopeMetrics
from visioneval.benchmarks.pope.spec import LMMS, PAPER, SETTINGS, VLMEVALKIT, YES
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.blocks import ComparisonTable, Section
from visioneval.core.foreign import ForeignReader
from visioneval.core.gap import GapHeadlines, Reported, dig, gathered
from visioneval.core.headline import Headline, from_block
from visioneval.core.marks import Interval, percent
from visioneval.core.published import PublishedTable, RunBeside
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun
from visioneval.stats.paired import PairedRow


def _first_labels(metrics: dict[str, Any]) -> str:
    return ((metrics.get("labels") or {}).get("sets") or ["original"])[0]


class PopeDefinition(BenchmarkDefinition):
    name = "pope"
    summary = ("Evaluate a model on POPE (arXiv 2305.10355), object hallucination in yes/no "
               "questions, under the paper's, lmms-eval's and VLMEvalKit's protocols, side by "
               "side.")
    options_model = PopeOptions
    metrics_model = PopeMetrics
    model_help = "Model name; builtin: random."
    max_tokens = 128
    max_tokens_help = "lmms-eval's max_new_tokens for POPE."
    synth_help = ("Write a small POPE-shaped set (Full/<setting> and data/test files, the "
                  "Hub's columns): --n images per setting, 6 questions each.")
    synth_rows = 10
    settings_that_matter = ("protocol", "labels", "num_samples", "settings", "judge_model")
    judge_target = ("judge_base_url", "judge_api_key_env")

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.pope.benchmark import build

        return build(options)

    def benchmark_class(self) -> type[Benchmark]:
        from visioneval.benchmarks.pope.benchmark import Pope

        return Pope

    def headline(self, metrics: dict[str, Any]) -> Headline:
        """The paper's reading, mean F1 of the three settings (LLaVA-1.5's one number) when
        the run has them, else the first setting's F1."""
        labels = _first_labels(metrics)
        block = (metrics.get(PAPER) or {}).get(labels)
        if not isinstance(block, dict):
            protocol = next((p for p in (LMMS, VLMEVALKIT) if p in metrics), None)
            if protocol is None:
                return Headline("F1", unavailable="no protocol in metrics.json")
            pooled = metrics[protocol][labels].get("pooled" if protocol == LMMS else
                                                   "overall")
            return from_block(f"F1, {protocol}, settings pooled", pooled, "f1")
        if "f1" in (block.get("mean_f1") or {}):
            return from_block("F1, mean of 3 settings (paper's reading)", block["mean_f1"], "f1")
        setting = next(iter(block.get("settings") or {}), None)
        return from_block(f"F1, {setting} (paper's reading)",
                          (block.get("settings") or {}).get(setting), "f1")

    def unparsed(self, metrics: dict[str, Any]) -> int | None:
        """Answers the headline's protocol could not read: none under the paper's rule (it
        reads every answer yes or no); else lmms-eval's or VLMEvalKit's pooled count."""
        labels = _first_labels(metrics)
        for protocol, scope in ((PAPER, None), (LMMS, "pooled"), (VLMEVALKIT, "overall")):
            block = (metrics.get(protocol) or {}).get(labels)
            if isinstance(block, dict):
                blocks = block.get("settings", {}).values() if scope is None else \
                    [block.get(scope) or {}]
                return sum(int(b.get("unparsed", 0)) for b in blocks)
        return None

    def synth(self, out: Path, rows: int, seed: int) -> list[str]:
        from visioneval.benchmarks.pope.synth import write_synthetic

        files = write_synthetic(out, rows, seed)
        return [f"{files[s]}: {6 * rows} questions about {rows} images ({s})"
                for s in ("random", "popular", "adversarial")] + \
            [f"{files['test']}: the same {18 * rows} rows as the default config `test`"]

    def sections(self, view: ReadableRun) -> list[Section]:
        from visioneval.benchmarks.pope.report import sections

        return sections(view.metrics)

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        from visioneval.benchmarks.pope.tables import show_main

        show_main(view.metrics, view.model, console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        from visioneval.benchmarks.pope.tables import show

        show(view.metrics, view.model, console)

    # -- paired tests (compare) and the blind control ----------------------------------------
    def paired_rows(self, record: Record) -> dict[str, Any]:
        """What each protocol headlines, clustered by image: the paper's accuracy, F1 of
        "yes" (TP, FP, FN) and yes ratio per setting; lmms-eval's and VLMEvalKit's accuracy
        and F1 over the settings pooled (their `pope` task, their Overall)."""
        return self._rows(record, chance=False)

    chance_rule = ("chance: \"yes\" or \"no\" picked at random, each half the time: accuracy "
                   "50%, yes ratio 50%; F1 from the expected counts")

    def chance_rows(self, record: Record) -> dict[str, Any]:
        """A fair coin's expected outcome, for each row `paired_rows` names."""
        return self._rows(record, chance=True)

    def _rows(self, record: Record, chance: bool) -> dict[str, PairedRow]:
        from visioneval.benchmarks.pope.protocols import said

        meta = record.metadata
        setting, image = meta.get("setting"), meta.get("image")
        label = record.target.get("answer") if isinstance(record.target, dict) else None
        if setting not in SETTINGS or label not in (YES, "no"):
            return {}
        positive = label == YES
        rows: dict[str, PairedRow] = {}
        for protocol, score in record.scores.items():
            if "correct" not in score:
                continue
            scope = setting if protocol == PAPER else "pooled"
            name = f"{scope} {{}} ({protocol})"
            yes = said(protocol, str(record.parsed.get(protocol, "")))
            if chance:  # the expected outcome of a fair coin, no cluster needed
                rows[name.format("accuracy")] = PairedRow("correct", (0.5,))
                rows[name.format("F1")] = PairedRow("macro_f1", (
                    0.5 * positive, 0.5 * (not positive), 0.5 * positive))
                yes_value = 0.5
            else:
                rows[name.format("accuracy")] = \
                    PairedRow("correct", (float(score["correct"]),), image)
                rows[name.format("F1")] = PairedRow("macro_f1", (
                    float(yes == YES and positive), float(yes == YES and not positive),
                    float(yes == "no" and positive)), image)
                yes_value = float(yes == YES)
            if protocol == PAPER:
                rows[name.format("yes ratio")] = PairedRow(
                    "correct", (yes_value,), None if chance else image)
        return rows

    def browser_row(self, record: Record) -> dict[str, Any]:
        meta = record.metadata
        target = record.target if isinstance(record.target, dict) else {}
        views = {p: {"a": str(record.parsed.get(p, "")), "ok": s.get("correct") == 1.0}
                 for p, s in record.scores.items()}
        fixed = target.get("corrected")
        note = f"; RePOPE: {fixed}" if fixed and fixed != target.get("answer") else ""
        return {"t": f"{meta.get('question', '')} {target.get('answer', '')}{note}",
                "labels": [str(target.get("answer", ""))], "v": views,
                "meta": f"{meta.get('setting', '')}, {meta.get('image', '')}, "
                        f"{meta.get('family', '')} prompt"}

    # -- published numbers, compare, other tools' logs ---------------------------------------
    def gap_headlines(self, metrics: dict[str, Any]) -> GapHeadlines | None:
        """The mean of the three settings' F1 (LLaVA-1.5's summary of the paper's protocol),
        lmms-eval's pooled F1 (its `pope` task) and VLMEvalKit's pooled F1 'Overall'
        (`visioneval explain`)."""
        from visioneval.benchmarks.pope.spec import LMMS, PROTOCOLS, VLMEVALKIT

        def find(protocol: str, labels: str) -> Reported:
            if protocol == VLMEVALKIT:
                return dig(metrics, protocol, labels, "overall"), "f1", "pooled F1"
            if protocol == LMMS:
                return dig(metrics, protocol, labels, "pooled"), "f1", "pooled F1 (pope)"
            return dig(metrics, protocol, labels, "mean_f1"), "f1", "mean F1 of 3 settings"

        return gathered("mean_f1", "paper", PROTOCOLS, find)

    def published(self) -> PublishedTable:
        from visioneval.benchmarks.pope.published import table

        return table()

    def beside_published(self, view: ReadableRun) -> RunBeside:
        from visioneval.benchmarks.pope.published import beside

        return beside(view.info, view.metrics)

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable:
        """Per model and protocol: F1 per setting, the pooled F1 of lmms-eval and VLMEvalKit,
        and the paper's mean F1."""
        header = ["Model", "Protocol", *(f"{s} F1" for s in SETTINGS), "pooled / mean F1"]
        rows, runs, spans = [], [], []
        for view in views:
            labels = _first_labels(view.metrics)
            for protocol in (PAPER, LMMS, VLMEVALKIT):
                block = (view.metrics.get(protocol) or {}).get(labels)
                if not isinstance(block, dict):
                    continue
                settings = block.get("settings") or {}
                last = block.get("mean_f1") or block.get("pooled") or block.get("overall") \
                    or {}
                cells = [settings.get(s) or {} for s in SETTINGS] + [last]
                rows.append([view.model, protocol + ("" if labels == "original"
                                                     else f" ({labels})"),
                             *(fmt.pct(c.get("f1"), missing="-") for c in cells)])
                found: list[Interval | None] = [None, None]
                found += [percent(c.get("f1_ci95")) for c in cells]
                spans.append(found)
                runs.append(view)
        return ComparisonTable(self.name, header, rows, [True] * (len(header) - 2),
                               runs=runs, intervals=spans,
                               notes=["F1 of \"yes\" in percent; last column: the paper "
                                      "protocol's mean of the three settings (LLaVA-1.5's "
                                      "summary), lmms-eval's and VLMEvalKit's settings "
                                      "pooled. A run's protocols score the same answers: "
                                      "its cost is on each of its rows, spent once."])

    def foreign_logs(self) -> dict[str, ForeignReader]:
        """lmms-eval's POPE samples logs and VLMEvalKit's prediction files
        (`visioneval rescore`)."""
        from visioneval.benchmarks.pope.lmms_eval import PopeLmmsEval
        from visioneval.benchmarks.pope.vlmevalkit import PopeVlmEvalKit

        return {"lmms-eval": PopeLmmsEval(), "vlmevalkit": PopeVlmEvalKit()}


DEFINITION = PopeDefinition()


class RescoredPope(PopeDefinition):
    """POPE runs re-scored from another tool's log: shown like any POPE run, rebuilt (report,
    compare) without data."""

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.pope.benchmark import scoring_only

        return scoring_only(options)


RESCORED = RescoredPope()
