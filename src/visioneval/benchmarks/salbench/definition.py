"""How SalBench runs are shown: report sections (the results table, per-class charts and a
confusion view), sample-browser rows and the paper's Table 1 layout for `compare`."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval import fmt
from visioneval.benchmarks.salbench.metrics import (
    NO_DIFFICULTY,
    SalBenchMetrics,
    image_key,
    paired_values,
)
from visioneval.benchmarks.salbench.options import SalBenchOptions, SalBenchSynthOptions
from visioneval.benchmarks.salbench.parse import target_absent, target_labels
from visioneval.benchmarks.salbench.spec import CONFIGS, TASKS
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition, ListedVariant
from visioneval.core.blocks import Charts, ComparisonTable, Note, Section, Table
from visioneval.core.capabilities import Demo
from visioneval.core.figures import BarSeries, CountMatrix, GroupedBars, percent_interval
from visioneval.core.foreign import ForeignReader
from visioneval.core.headline import Headline
from visioneval.core.marks import Interval, percent
from visioneval.core.published import PublishedTable, RunBeside
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun
from visioneval.stats.paired import PairedRow

# The paper's Table 1 columns (its results CSV's names) and the config behind each.
TABLE1_COLUMNS = {
    "Detection_NAT": "O3", "Detection_SYN": "P3", "Referring_NAT": "O3_box",
    "Referring_SYN": "P3_box", "VisualRef_NAT": "O3_box_img", "VisualRef_SYN": "P3_box_img",
}


def _pct(value: float | None) -> str:
    return fmt.pct(value, missing="-")


class SalBenchDefinition(BenchmarkDefinition):
    name = "salbench"
    summary = "Evaluate a model on SalBench (arXiv 2507.04741) as the paper does."
    options_model = SalBenchOptions
    metrics_model = SalBenchMetrics
    model_help = "Model name; builtin: popout, random, majority."
    synth_help = "Write a P3-style synthetic SalBench set in the real schema and folder layout."
    synth_rows = 100
    synth_options = SalBenchSynthOptions
    demo_model = "popout"
    settings_that_matter = ("prompt", "configs", "num_samples")

    def make(self, options: BaseModel) -> Benchmark:
        """SalBench from its options; `--prompt both` adds lmms-eval's prompt as SalBench's
        own request variant (`variants.py`), a family on the same rows."""
        from visioneval.benchmarks.salbench.benchmark import build

        benchmark = build(options)
        if benchmark.options.prompt != "both":
            return benchmark
        from visioneval.benchmarks.salbench.variants import LmmsEvalPrompt
        from visioneval.variants.family import Varied

        return Varied(benchmark, [LmmsEvalPrompt()], self)

    def from_command(self, options: BaseModel) -> Benchmark:
        """As `build`, and a folder missing configs says which flag runs what it holds."""
        from visioneval.benchmarks.salbench.data import MissingConfigs
        from visioneval.io.parquet import DataError

        checked = self.validate_options(options)
        assert isinstance(checked, SalBenchOptions)
        try:
            return self.make(checked)
        except MissingConfigs as exc:
            hint = exc.hint([CONFIGS[c] for c in checked.configs], checked.named_configs)
            if hint is None:
                raise
            raise DataError(f"{exc}; {hint}") from None

    def synth(self, out: Path, rows: int, seed: int,
              options: SalBenchSynthOptions | None = None) -> list[str]:
        from visioneval.benchmarks.salbench.synth import DETECTION, write_synthetic

        absent = (options or SalBenchSynthOptions()).target_absent
        written = write_synthetic(out, rows, seed, target_absent=absent)
        return [f"{out / config}: {n} rows" + (f" ({absent} of them target-absent)"
                                               if absent and config in DETECTION else "")
                for config, n in written.items()]

    def demo(self, cache_root: Path, n: int, seed: int) -> Demo:
        from visioneval.benchmarks.salbench.synth import cached_synthetic
        from visioneval.invocation import command

        data = cached_synthetic(cache_root, n, seed)
        return Demo(self.build({"configs": ["P3", "P3_box", "P3_box_img"], "data_dir": data}),
                    f"synthetic SalBench P3 set: {data}",
                    "popout is a classical image-processing baseline (no neural network) that "
                    "finds the odd object by colour, size and angle statistics. What else "
                    f"runs: `{command('list')}`; a real model's options: "
                    f"`{command('salbench', '--help')}`. Evaluate a real model with:",
                    f"{command('salbench', '--backend', 'openai', '--model')} MODEL")

    def benchmark_class(self) -> type[Benchmark]:
        from visioneval.benchmarks.salbench.benchmark import SalBench

        return SalBench

    def listed_variants(self) -> list[ListedVariant]:
        from visioneval.benchmarks.salbench.variants import LmmsEvalPrompt

        made = LmmsEvalPrompt()
        return [ListedVariant(made.name, made.help, "--prompt both")]

    def headline(self, metrics: dict[str, Any]) -> Headline:
        from visioneval.benchmarks.salbench.headline import headline

        return headline(metrics)

    def sections(self, view: ReadableRun) -> list[Section]:
        rows = []
        for config, block in view.metrics.items():
            spec = CONFIGS[config]
            # The headline, then a second prompt family's answers (--prompt both).
            for name, parsers in (("", block),
                                  *[(f", {family} prompt", other) for family, other
                                    in (block.get("by_prompt") or {}).items()]):
                strict, lenient = parsers["strict"], parsers["lenient"]
                rows.append([f"{TASKS[spec.task]} ({config}){name}", strict["n"],
                             strict["n_errors"],
                             f"{strict['n_unparsed']} / {lenient['n_unparsed']}",
                             _pct(strict.get("exact_match")), _pct(strict.get("macro_f1")),
                             _pct(lenient.get("exact_match")), _pct(lenient.get("macro_f1")),
                             _pct(strict.get("sample_f1")),
                             fmt.interval(strict.get("exact_match_ci95")),
                             fmt.interval(strict.get("macro_f1_ci95"))])
        # The headline: the table, its chart beside it, then what they mean; then the
        # false alarms on target-absent rows, when the run had any.
        out = [Section("Results (percent)", [
            Table(["config", "n", "errors", "unparsed strict / lenient", "EM", "macro F1",
                   "EM lenient", "macro F1 lenient", "sample F1", "EM 95% interval",
                   "macro F1 95% interval"], rows),
            Charts([_headline_chart(view.metrics)]),
            Note("EM: exact match of the label set. Macro F1: the paper's 'F1 Overall', the "
                 "mean of per-class F1 (TP/FP/FN pooled over samples) over all classes. "
                 "strict is the reference parser and gives the main numbers; lenient forgives "
                 "answer format. Intervals: 95% bootstrap over samples (1000 seeded resamples), "
                 "strict parser."),
            *_target_absent_blocks(view.metrics)])]
        from visioneval.benchmarks.salbench.tables import POOLED_HEADER, POOLED_NOTE, pooled_rows

        pooled = pooled_rows(view.metrics)
        if pooled:
            out.append(Section("Tasks pooled per image set (percent)", [
                Table(POOLED_HEADER, pooled), Note(POOLED_NOTE)]))
        out.append(_protocol_section(view.metrics))

        wanted = {config: list(block["strict"]["per_class"])
                  for config, block in view.metrics.items()
                  if block["strict"].get("per_class")}
        matrices = confusions(view.iter_records(), wanted)  # one pass for every config
        for config, block in view.metrics.items():
            if config not in wanted:
                continue
            per_class, classes = block["strict"]["per_class"], wanted[config]
            series = [BarSeries(m.capitalize(), [100 * per_class[c][m] for c in classes])
                      for m in ("precision", "recall", "f1")]
            bars = GroupedBars(f"{config}: per-class (strict)", classes, series, "percent")
            matrix = CountMatrix(f"{config}: true vs predicted (strict)", classes,
                                 [*classes, "(none)"], matrices[config], "predicted", "true")
            out.append(Section(f"{config}: per class", [Charts([bars, matrix])]))
        return out

    def paired_rows(self, record: Record) -> dict[str, Any]:
        """Exact match (McNemar) and macro F1 (paired bootstrap) of the headline parser,
        per config; a second prompt family's under its own names ("O3 (lmms-eval prompt)
        exact match"), as its group says; and an image set's tasks together ("P3 tasks
        pooled exact match", clustered by scene; shown where a scene has two tasks).
        Target-absent rows are in none."""
        config = (record.metadata or {}).get("config", record.group)
        if "strict" not in record.scores or config not in CONFIGS or \
                target_absent(str(record.target)):
            return {}
        name = config if record.group == config else \
            f"{config} ({record.metadata.get('prompt', '?')} prompt)"
        pred, gold = set(record.parsed.get("strict") or []), target_labels(str(record.target))
        # The scene rides along: rows of one metric that share it are tested as clusters.
        scene = image_key(record)
        rows = {f"{name} {metric}": replace(row, cluster=scene) for metric, row in
                paired_values(pred, gold, CONFIGS[config].classes,
                              record.scores["strict"]).items()}
        # The image set's tasks together, as `pooled_tasks`: each scene's answers a cluster.
        rows[_pooled(config, name)] = replace(rows[f"{name} exact match"], pooled=True)
        return rows

    chance_rule = ("chance: one feature named at random from the config's classes (exact match "
                   "1/k on a one-feature answer, 0 otherwise; macro F1 of the expected counts)")

    def chance_rows(self, record: Record) -> dict[str, Any]:
        """A uniform one-class guess, in `paired_rows`' metrics: expected exact match and
        expected TP, FP and FN per class."""
        config = (record.metadata or {}).get("config", record.group)
        if config not in CONFIGS:
            return {}
        classes = CONFIGS[config].classes
        gold, share = target_labels(str(record.target)), 1 / len(CONFIGS[config].classes)
        name = config if record.group == config else \
            f"{config} ({record.metadata.get('prompt', '?')} prompt)"
        exact = PairedRow("correct", (share if len(gold) == 1 else 0.0,))
        return {f"{name} exact match": exact,
                _pooled(config, name): PairedRow("correct", exact.values, pooled=True),
                f"{name} macro F1": PairedRow("macro_f1", (
                    *[share * (c in gold) for c in classes],
                    *[share * (c not in gold) for c in classes],
                    *[(1 - share) * (c in gold) for c in classes]))}

    def browser_row(self, record: Record) -> dict[str, Any]:
        """A target-absent row's target is "none" (its answer is right when it names no
        feature: the score's exact match)."""
        views = {}
        for parser in ("strict", "lenient"):
            if parser in record.scores:
                views[parser] = {"a": ", ".join(record.parsed.get(parser, [])),
                                 "ok": record.scores[parser]["exact_match"] == 1.0}
        target = str(record.target)
        if target_absent(target):
            return {"t": "none", "labels": ["none"], "v": views}
        return {"t": target, "labels": sorted(target_labels(target)), "v": views}

    def published(self) -> PublishedTable:
        from visioneval.benchmarks.salbench.published import table

        return table()

    def beside_published(self, view: ReadableRun) -> RunBeside:
        from visioneval.benchmarks.salbench.published import beside

        return beside(view.info, view.metrics)

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable:
        """The paper's Table 1: models and shots as rows, macro F1 and exact match per
        task x image set (strict parser)."""
        header = ["Model", "Shot"]
        for column in TABLE1_COLUMNS:
            header += [f"{column} F1", f"{column} EM"]
        # A run with target-absent rows adds its configs' false-alarm rates (lower is better).
        absent = [(column, config) for column, config in TABLE1_COLUMNS.items()
                  if any(v.metrics.get(config, {}).get("target_absent") for v in views)]
        header += [f"{column} false alarms" for column, _ in absent]
        rows, runs, intervals = [], [], []
        for view in sorted(views, key=lambda v: (v.model, v.info.options.get("shots", 0))):
            row = [view.model, str(view.info.options.get("shots", 0))]
            spans: list[Interval | None] = [None, None]
            for config in TABLE1_COLUMNS.values():
                block = view.metrics.get(config, {}).get("strict", {})
                row += [fmt.pct(block.get("macro_f1")), fmt.pct(block.get("exact_match"))]
                spans += [percent(block.get("macro_f1_ci95")),
                          percent(block.get("exact_match_ci95"))]
            for _, config in absent:
                figures = (view.metrics.get(config, {}).get("target_absent") or {}).get(
                    "strict", {})
                row.append(fmt.pct(figures.get("false_alarm_rate")))
                spans.append(percent(figures.get("false_alarm_rate_ci95")))
            rows.append(row)
            runs.append(view)
            intervals.append(spans)
        notes = [FALSE_ALARM_COLUMNS] if absent else []
        return ComparisonTable(self.name, header, rows,
                               [True] * (len(header) - 2 - len(absent)) + [False] * len(absent),
                               runs=runs, intervals=intervals, notes=notes)

    def unparsed(self, metrics: dict[str, Any]) -> int | None:
        return sum(block.get("strict", {}).get("n_unparsed", 0) for block in metrics.values())

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        """Per config: EM and macro F1 of the headline parser with their 95% intervals."""
        from visioneval.benchmarks.salbench.tables import show_main

        show_main(view.metrics, _label(view), console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        from visioneval.benchmarks.salbench.tables import show

        show(view.metrics, _label(view), console)

    def foreign_logs(self) -> dict[str, ForeignReader]:
        """lmms-eval's salbench samples logs (`visioneval rescore --from lmms-eval`)."""
        from visioneval.benchmarks.salbench.lmms_eval import SalBenchLmmsEval

        return {"lmms-eval": SalBenchLmmsEval()}


def _label(view: ReadableRun) -> dict[str, Any]:
    return {"model": view.model, "shots": view.info.options.get("shots", 0)}


def confusions(records: Iterable[Record], classes: dict[str, list[str]]
               ) -> dict[str, list[list[int]]]:
    """Per config, gold label x predicted label counts (multi-label: every pair counts
    once), strict parser, in one pass over the records; answers with no class land in the
    last column, "(none)"."""
    counts = {config: [[0] * (len(names) + 1) for _ in names]
              for config, names in classes.items()}
    for record in records:
        names = classes.get(record.group)
        if names is None or not record.ok:
            continue
        matrix = counts[record.group]
        predicted = [names.index(c) for c in record.parsed.get("strict", []) if c in names] \
            or [len(names)]
        for gold in target_labels(record.target):
            if gold in names:
                row = matrix[names.index(gold)]
                for p in predicted:
                    row[p] += 1
    return counts


DEFINITION = SalBenchDefinition()


def _protocol_section(metrics: dict[str, Any]) -> Section:
    """The same answers scored as the paper, leniently, as sample F1 and as lmms-eval's
    O3; then results per difficulty, or why there are none."""
    from visioneval.benchmarks.salbench.tables import (
        PROMPT_EFFECT_NOTE,
        PROTOCOL_COLUMNS,
        PROTOCOL_NOTE,
        SECOND_PROMPT_NOTE,
        difficulty_rows,
        prompt_effect_rows,
        protocol_columns,
        protocol_rows,
    )

    columns = protocol_columns(metrics)
    blocks: list[Any] = [Table(["config", *columns.values()], protocol_rows(metrics)),
                         Note(PROTOCOL_NOTE)]
    if len(columns) > len(PROTOCOL_COLUMNS):
        blocks.append(Note(SECOND_PROMPT_NOTE))
    header, rows = prompt_effect_rows(metrics)
    if rows:
        blocks += [Table(header, rows), Note(PROMPT_EFFECT_NOTE)]
    levels = difficulty_rows(metrics)
    if levels:
        blocks += [Table(["config", "difficulty", "n", "errors", "EM", "F1"], levels),
                   Note("By difficulty: strict parser; EM exact match, F1 macro F1.")]
    else:
        blocks.append(Note(f"By difficulty: not available: {NO_DIFFICULTY}."))
    return Section("Why published numbers differ", blocks)




FALSE_ALARM_COLUMNS = ("false alarms: the share of target-absent scenes (every object alike) "
                       "whose answer names a feature, strict parser, with its 95% Wilson "
                       "interval; left out of F1 and EM.")


def _target_absent_blocks(metrics: dict[str, Any]) -> list[Any]:
    """The false alarms on target-absent rows per config (and prompt family), a table and
    what it means; nothing when the run had none."""
    from visioneval.benchmarks.salbench.tables import (
        TARGET_ABSENT_NOTE,
        false_alarms,
        target_absent_blocks,
    )

    rows = []
    for config, block in metrics.items():
        for family, parsers in target_absent_blocks(block):
            strict, lenient = parsers["strict"], parsers["lenient"]
            rows.append([config if family == "paper" else f"{config}, {family} prompt",
                         strict["n"], strict["n_errors"], false_alarms(strict),
                         false_alarms(lenient),
                         f"{strict['correct_rejections']} / {lenient['correct_rejections']}",
                         ", ".join(f"{f} {k}" for f, k in
                                   strict["by_feature_named"].items() if k) or "-"])
    if not rows:
        return []
    return [Table(["target-absent", "n", "errors", "false alarms strict (95% interval)",
                   "false alarms lenient (95% interval)",
                   "correct rejections strict / lenient", "features named (strict)"], rows),
            Note(TARGET_ABSENT_NOTE)]


def _headline_chart(metrics: dict[str, Any]) -> GroupedBars:
    """EM and macro F1 per config (strict parser) with their 95% intervals as error bars;
    a second prompt family's beside them (--prompt both)."""
    configs = list(metrics)
    families = [("", lambda block: block)] + [
        (f" ({family} prompt)", lambda block, f=family: (block.get("by_prompt") or {}).get(f, {}))
        for family in dict.fromkeys(f for b in metrics.values() for f in b.get("by_prompt") or {})]
    series = []
    for suffix, pick in families:
        for metric, name in (("exact_match", "EM"), ("macro_f1", "macro F1")):
            blocks = [pick(metrics[c]).get("strict") or {} for c in configs]
            series.append(BarSeries(
                name + suffix, [None if b.get(metric) is None else 100 * b[metric]
                                for b in blocks],
                [percent_interval(b.get(f"{metric}_ci95")) for b in blocks]))
    return GroupedBars("EM and macro F1 per config (strict parser)", configs, series,
                       "percent")


class RescoredSalBench(SalBenchDefinition):
    """SalBench runs re-scored from another tool's log: shown like any SalBench run, rebuilt
    (report, compare) without data."""


    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.salbench.benchmark import ScoringOnly

        return ScoringOnly(SalBenchOptions.model_validate(options))


RESCORED = RescoredSalBench()


def _pooled(config: str, name: str) -> str:
    """The paired metric of an image set's tasks together: "P3 tasks pooled exact match"
    (a second prompt family's: "P3 tasks pooled (lmms-eval prompt) exact match")."""
    return f"{CONFIGS[config].dataset} tasks pooled{name[len(config):]} exact match"
