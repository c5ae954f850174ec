"""How BlindTest runs are shown: the paper's Table 1 reading first, lmms-eval's and
VLMEvalKit's readings of their own answers beside it, why they differ; published numbers,
compare, and the blind control against chance (touching circles: yes or no)."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the
# benchmark's implementation behind it loads on first use.

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval.benchmarks.blindtest.options import BlindTestOptions, BlindTestSynthOptions
from visioneval.benchmarks.blindtest.schema import BlindTestMetrics
from visioneval.benchmarks.blindtest.spec import CHANCE, LMMS, LMMS_MAX_TOKENS, PAPER
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.blocks import Section
from visioneval.core.foreign import ForeignReader
from visioneval.core.gap import GapHeadlines, Reported, dig, gathered
from visioneval.core.headline import Headline, from_block
from visioneval.core.published import PublishedTable, RunBeside
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun
from visioneval.stats.paired import PairedRow


def _first_labels(metrics: dict[str, Any]) -> str:
    return ((metrics.get("labels") or {}).get("sets") or ["original"])[0]


class BlindTestDefinition(BenchmarkDefinition):
    name = "blindtest"
    summary = ("Evaluate a model on BlindTest (arXiv 2407.06581, \"Vision language models "
               "are blind\"), seven low-level geometry tasks, under the paper's, lmms-eval's "
               "and VLMEvalKit's protocols, side by side.")
    options_model = BlindTestOptions
    metrics_model = BlindTestMetrics
    model_help = "Model name; builtin: random."
    max_tokens = LMMS_MAX_TOKENS
    max_tokens_help = "lmms-eval's max_new_tokens for vlmsareblind."
    synth_help = ("Write a small BlindTest-shaped set (data/valid-00000-of-00001.parquet, the "
                  "Hub's columns): --n images per task (at most the Hub's count of it: --n 3600 "
                  "is the full 8,016), drawn with the paper's parameters; --gaps for denser "
                  "circle gaps.")
    synth_rows = 4
    synth_options = BlindTestSynthOptions
    settings_that_matter = ("protocol", "labels", "num_samples")

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.blindtest.benchmark import build

        return build(options)

    def benchmark_class(self) -> type[Benchmark]:
        from visioneval.benchmarks.blindtest.benchmark import BlindTest

        return BlindTest

    def headline(self, metrics: dict[str, Any]) -> Headline:
        """The paper's reading: the mean of the eight tasks' accuracies (Table 1's mean)."""
        labels = _first_labels(metrics)
        for protocol in (PAPER, LMMS):
            block = (metrics.get(protocol) or {}).get(labels)
            if isinstance(block, dict):
                return from_block(f"task mean ({protocol})", block.get("task_mean"),
                                  "accuracy")
        return Headline("task mean", unavailable="VLMEvalKit gives no overall number")

    def unparsed(self, metrics: dict[str, Any]) -> int | None:
        labels = _first_labels(metrics)
        block = (metrics.get(PAPER) or {}).get(labels)
        if not isinstance(block, dict):
            return None
        return int((block.get("accuracy") or {}).get("unparsed", 0))

    def synth(self, out: Path, rows: int, seed: int,
              options: BlindTestSynthOptions | None = None) -> list[str]:
        from visioneval.benchmarks.blindtest.synth import GAPS, write_synthetic

        gaps = (options or BlindTestSynthOptions()).gap_values
        path, n = write_synthetic(out, rows, seed, capped=True, gaps=gaps or GAPS)
        said = f", {len(gaps)} circle gaps ({min(gaps):g} to {max(gaps):g})" if gaps else ""
        return [f"{path}: {n} rows, up to {rows} per task label{said}"]

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        from visioneval.benchmarks.blindtest.tables import show_main

        show_main(view.metrics, view.model, console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        from visioneval.benchmarks.blindtest.tables import show_main

        show_main(view.metrics, view.model, console)

    def sections(self, view: ReadableRun) -> list[Section]:
        from visioneval.benchmarks.blindtest.tables import sections

        return sections(view.metrics)

    # -- paired tests (compare) and the blind control ----------------------------------------
    def paired_rows(self, record: Record) -> dict[str, Any]:
        """Each protocol's right/wrong per task, by item (one image per item)."""
        return self._rows(record, chance=False)

    chance_rule = ("chance: touching circles answered yes or no at random, 50%; the counting "
                   "and letter tasks have no fixed answer set, so no chance level")

    def chance_rows(self, record: Record) -> dict[str, Any]:
        return self._rows(record, chance=True)

    def _rows(self, record: Record, chance: bool) -> dict[str, PairedRow]:
        meta = record.metadata
        task = meta.get("task")
        rows: dict[str, PairedRow] = {}
        for protocol, score in record.scores.items():
            if "correct" not in score or not isinstance(task, str):
                continue
            name = f"{task} accuracy ({protocol})"
            if chance:
                if task in CHANCE:
                    rows[name] = PairedRow("correct", (CHANCE[task],))
                continue
            rows[name] = PairedRow("correct", (float(score["correct"]),), meta.get("item"))
        return rows

    def browser_row(self, record: Record) -> dict[str, Any]:
        meta = record.metadata
        target = record.target if isinstance(record.target, dict) else {}
        views = {p: {"a": str(record.parsed.get(p, "")), "ok": s.get("correct") == 1.0}
                 for p, s in record.scores.items()}
        params = meta.get("parameters") or {}
        said = ", ".join(f"{k}={v}" for k, v in list(params.items())[:6])
        return {"t": f"{meta.get('prompt', '')} -> {target.get('groundtruth', '')}",
                "labels": [str(meta.get("task", ""))], "v": views,
                "meta": f"{meta.get('task', '')}; {said}; {meta.get('family', '')} prompt"}

    # -- published numbers, other tools' logs -------------------------------------------------
    def gap_headlines(self, metrics: dict[str, Any]) -> GapHeadlines | None:
        """The paper's mean of its eight task accuracies and lmms-eval's micro accuracy
        (`visioneval explain`); VLMEvalKit reports per task only, and is left out."""
        from visioneval.benchmarks.blindtest.published import MEAN

        def find(protocol: str, labels: str) -> Reported:
            if protocol == "lmms-eval":
                return dig(metrics, protocol, labels, "accuracy"), "accuracy", "accuracy"
            return dig(metrics, protocol, labels, "task_mean"), "accuracy", "task mean"

        return gathered(MEAN, "paper", ("paper", "lmms-eval"), find)

    def published(self) -> PublishedTable:
        from visioneval.benchmarks.blindtest.published import table

        return table()

    def beside_published(self, view: ReadableRun) -> RunBeside:
        from visioneval.benchmarks.blindtest.published import beside

        return beside(view.info, view.metrics)


    def foreign_logs(self) -> dict[str, ForeignReader]:
        """lmms-eval's vlmsareblind samples logs and VLMEvalKit's VLMBlind prediction files
        (`visioneval rescore --from lmms-eval|vlmevalkit`)."""
        from visioneval.benchmarks.blindtest.lmms_eval import BlindTestLmmsEval
        from visioneval.benchmarks.blindtest.vlmevalkit import BlindTestVlmEvalKit

        return {"lmms-eval": BlindTestLmmsEval(), "vlmevalkit": BlindTestVlmEvalKit()}


DEFINITION = BlindTestDefinition()


class RescoredBlindTest(BlindTestDefinition):
    """BlindTest runs re-scored from another tool's log: shown like any run, without data."""

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.blindtest.benchmark import scoring_only

        return scoring_only(options)


RESCORED = RescoredBlindTest()
