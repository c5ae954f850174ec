"""SalBench metrics, as the reference aggregates them (lmms-eval salbench utils.py):

- exact_match: mean over samples of set equality between prediction and answer;
- per_class: TP/FP/FN pooled over samples for each class, P = tp/(tp+fp+1e-8),
  R = tp/(tp+fn+1e-8), F1 = 2PR/(P+R+1e-8);
- macro_f1: the plain mean of per-class F1 over the whole class list (3 for P3, 7 for O3):
  the leaderboard's "F1 Overall" and the number the paper's abstract quotes;
- sample_f1: per-sample set F1 averaged (lmms-eval reports it; it is not the paper's F1).

Failed requests are counted in n_errors and left out of every score.

`pooled_tasks` (in each config's block, when a run holds two or more tasks of one image
set): the headline parser's figures over all those tasks' answers together. Detection,
Referring and Visual Referring ask about the same scenes, so that interval is a cluster
bootstrap that draws images (`stats.bootstrap`); each config's own intervals, where each
image appears once, are the plain bootstrap's.

Target-absent control rows (answer "None", `data synth-salbench --target-absent`) are left
out of all of these and tallied apart (`AbsentTally`): false alarms (the answer names a
feature), correct rejections and the false-alarm rate with its Wilson interval.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import Field, RootModel

from visioneval.benchmarks.salbench.parse import rejects, target_absent, target_labels
from visioneval.benchmarks.salbench.spec import CONFIGS
from visioneval.core.runfiles import Interval, MetricsBlock
from visioneval.metrics.labelsets import ParserMetrics, ParserTally, sample_scores
from visioneval.stats.binomial import wilson
from visioneval.stats.bootstrap import Outcomes, attach, summaries
from visioneval.stats.paired import PairedCollector, PairedRow, macro_f1, paired

if TYPE_CHECKING:
    pass

PARSERS = ("strict", "lenient")


# lmms-eval's O3 tasks average per-class F1 over these three only (its `_o3_default` reuses
# the P3 aggregation since commit c542634, merged in PR #744).
LMMS_EVAL_O3_CLASSES = ("orientation", "color", "size")
NO_DIFFICULTY = ("the data has no difficulty column (SalBench's own configs carry image, "
                 "question, answer and image_id only)")


@dataclass
class AbsentTally:
    """One parser's answers on a config's target-absent rows: each names a feature (a false
    alarm), says that none differs (a correct rejection, `parse.rejects`), or neither
    (unparsed: strict only)."""

    n: int = 0
    false_alarms: int = 0
    correct_rejections: int = 0
    named: Counter[str] = field(default_factory=Counter)

    def add(self, pred: set[str], rejected: bool, classes: Sequence[str]) -> None:
        self.n += 1
        named = pred.intersection(classes)
        if named:
            self.false_alarms += 1
            self.named.update(named)
        elif rejected:
            self.correct_rejections += 1

    def result(self, classes: Sequence[str], n_errors: int) -> dict[str, Any]:
        """Counts, and the false-alarm rate with its 95% Wilson interval (absent with the
        reason when no target-absent row was answered)."""
        out: dict[str, Any] = {
            "n": self.n, "n_errors": n_errors, "false_alarms": self.false_alarms,
            "correct_rejections": self.correct_rejections,
            "n_unparsed": self.n - self.false_alarms - self.correct_rejections,
            "by_feature_named": {c: self.named[c] for c in classes}}
        if self.n == 0:
            out["unavailable"] = f"no answered target-absent rows ({n_errors} failed requests)"
            return out
        out["false_alarm_rate"] = self.false_alarms / self.n
        out["false_alarm_rate_ci95"] = wilson(self.false_alarms, self.n)
        return out


@dataclass
class ConfigTally:
    """Both parsers' tallies and the failed requests of one config, fed record by record;
    the headline parser's tallies per difficulty too, when the records carry one. With a
    second prompt family (`--prompt both`), that family's records go to a tally of their
    own, and each sample's outcome under both prompts is kept for the prompt-effect test."""

    classes: Sequence[str]
    families: tuple[str, ...] = ("paper",)
    n_errors: int = 0
    parsers: dict[str, ParserTally] = field(
        default_factory=lambda: {parser: ParserTally() for parser in PARSERS})
    by_difficulty: dict[str, ParserTally] = field(default_factory=dict)
    errors_by_difficulty: Counter[str] = field(default_factory=Counter)
    other_families: dict[str, ConfigTally] = field(default_factory=dict)
    pairs: dict[str, PairedCollector] = field(default_factory=dict)
    # Target-absent rows, kept out of every figure above; None until one comes.
    absent: dict[str, AbsentTally] | None = None
    absent_errors: int = 0

    def add(self, record: Any) -> None:
        family = (record.metadata or {}).get("prompt") or self.families[0]
        absent = isinstance(record.target, str) and target_absent(record.target)
        if len(self.families) > 1 and record.ok and not absent:
            self._pair(family, record)
        if family != self.families[0]:
            if family not in self.other_families:
                self.other_families[family] = ConfigTally(self.classes, (family,))
            self.other_families[family].add(record)
            return
        if absent:
            self._add_absent(record)
            return
        level = record.metadata.get("difficulty") if record.metadata else None
        if not record.ok:
            self.n_errors += 1
            if level:
                self.errors_by_difficulty[level] += 1
            return
        gold = target_labels(record.target)
        # A second family's sample is "<row id>@<family>": its intervals resample by the row's
        # id, so they equal those of a run that sent that prompt alone.
        row_id = record.id.removesuffix(f"@{family}")
        for parser, tally in self.parsers.items():
            tally.add(set(record.parsed[parser]), gold, record.scores.get(parser),
                      self.classes, row_id)
        if level:
            self.by_difficulty.setdefault(level, ParserTally()).add(
                set(record.parsed[HEADLINE]), gold, record.scores.get(HEADLINE), self.classes,
                row_id)

    def result(self, config: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {parser: tally.result(self.classes, self.n_errors)
                               for parser, tally in self.parsers.items()}
        out["protocols"] = protocol_view(out, self.classes, config)
        if len(self.families) > 1:
            self._other_families(out, config)
        levels = sorted(set(self.by_difficulty) | set(self.errors_by_difficulty))
        if levels:
            out["by_difficulty"] = {
                level: (self.by_difficulty.get(level) or ParserTally()).result(
                    self.classes, self.errors_by_difficulty[level]) for level in levels}
        else:
            out["by_difficulty_unavailable"] = NO_DIFFICULTY
        if self.absent is not None:
            out["target_absent"] = {parser: tally.result(self.classes, self.absent_errors)
                                    for parser, tally in self.absent.items()}
        return out

    def _add_absent(self, record: Any) -> None:
        """A target-absent row's answer under both parsers (a failed request: an error)."""
        if self.absent is None:
            self.absent = {parser: AbsentTally() for parser in PARSERS}
        if not record.ok:
            self.absent_errors += 1
            return
        for parser, tally in self.absent.items():
            pred = set(record.parsed[parser])
            scores = record.scores.get(parser)
            # Decided on the full answer when it was parsed (the record may elide pieces).
            rejected = bool(scores["exact_match"]) if scores else rejects(parser, pred)
            tally.add(pred, rejected, self.classes)

    def _pair(self, family: str, record: Any) -> None:
        """The headline parser's outcome of one answer, keyed by its row, under its family."""
        pred, gold = set(record.parsed[HEADLINE]), target_labels(record.target)
        key = f"{record.metadata.get('config', record.group)}/{record.metadata.get('row')}"
        self.pairs.setdefault(family, PairedCollector()).add(
            key, paired_values(pred, gold, self.classes, record.scores.get(HEADLINE)))

    def _other_families(self, out: dict[str, Any], config: str) -> None:
        """Each other prompt family's metrics, its figures in the protocol view, and the
        paired test of prompt against prompt on the rows both scored."""
        headline = self.families[0]
        out["by_prompt"] = {}
        for family in self.families[1:]:
            tally = self.other_families.get(family) or ConfigTally(self.classes, (family,))
            block = tally.result(config)
            out["by_prompt"][family] = {parser: block[parser] for parser in PARSERS}
            if "target_absent" in block:
                out.setdefault("target_absent_by_prompt", {})[family] = block["target_absent"]
            view, theirs, name = out["protocols"], block["protocols"], f"{_key(family)}_prompt"
            for key in ("headline_macro_f1", "lmms_eval_o3_3class_f1"):
                short = key.replace("headline_", "")
                for suffix in ("", "_unavailable"):
                    if key + suffix in theirs:
                        view[f"{name}_{short}{suffix}"] = theirs[key + suffix]
            out.setdefault("prompt_effect", {})[family] = prompt_effect(
                self.pairs.get(headline), self.pairs.get(family), headline, family)


def image_key(record: Any) -> str:
    """What identifies a record's scene across SalBench's tasks: its image set and
    image_id (the same scene in Detection, Referring and Visual Referring), else its row;
    a record with neither is a scene of its own."""
    meta = record.metadata or {}
    config = meta.get("config", record.group)
    dataset = CONFIGS[config].dataset if config in CONFIGS else config
    image, row = meta.get("image_id"), meta.get("row")
    if image not in (None, ""):
        return f"{dataset}/{image}"
    return f"{dataset}/#{row}" if row is not None else f"sample {record.id}"


@dataclass
class TaskPool:
    """The headline family's scored answers (headline parser) of every task of one image
    set, each kept with its scene for the cluster bootstrap."""

    classes: Sequence[str]
    family: str
    configs: list[str] = field(default_factory=list)
    tally: ParserTally = field(default_factory=ParserTally)
    n_errors: int = 0
    outcomes: Outcomes | None = None

    def add(self, record: Any, config: str) -> None:
        meta = record.metadata or {}
        if (meta.get("prompt") or self.family) != self.family or (
                isinstance(record.target, str) and target_absent(record.target)):
            return
        if config not in self.configs:
            self.configs.append(config)
        if not record.ok:
            self.n_errors += 1
            return
        pred, gold = set(record.parsed[HEADLINE]), target_labels(record.target)
        scores = record.scores.get(HEADLINE)
        self.tally.add(pred, gold, scores, self.classes)
        own = scores or sample_scores(pred, gold)
        exact, sample_f1 = own["exact_match"], own["sample_f1"]
        if self.outcomes is None:
            self.outcomes = Outcomes(2 + 3 * len(self.classes))
        self.outcomes.add(record.id, [exact, sample_f1, *paired_values(
            pred, gold, self.classes, scores)["macro F1"].values], image_key(record))

    def result(self) -> dict[str, Any]:
        """The pooled figures, with cluster-bootstrap intervals over scenes."""
        block = self.tally.result(self.classes, self.n_errors)
        out: dict[str, Any] = {"configs": sorted(self.configs, key=_task_order)} | {
            k: block[k] for k in ("n", "n_errors", "unavailable", "exact_match", "macro_f1",
                                  "sample_f1") if k in block}
        if self.outcomes is not None and len(self.outcomes) == self.tally.n:
            clusters = self.outcomes.clusters("image")
            out["n_images"] = clusters.count
            attach(out, summaries(self.outcomes.matrix(), _pooled_statistic,
                                  ("exact_match", "macro_f1", "sample_f1"), clusters,
                                  shares=(0, None, 1)))  # EM, sample F1: column means
        return out


def _task_order(config: str) -> int:
    return list(CONFIGS).index(config) if config in CONFIGS else len(CONFIGS)


def _pooled_statistic(sums: Any, n: int) -> Any:
    """Exact match, macro F1 (pooled per-class counts, the reference's formula) and
    sample F1 from a resample's column sums (exact, sample F1, tp..., fp..., fn...)."""
    import numpy as np  # keeps `visioneval --help` (which loads this) light

    return np.column_stack([sums[:, 0] / n, macro_f1(sums[:, 2:]), sums[:, 1] / n])


def pool_tasks(blocks: dict[str, dict[str, Any]], pools: dict[str, TaskPool]) -> None:
    """Each config's block gets its image set's `pooled_tasks` when two or more of that
    set's tasks were in the run."""
    for config, block in blocks.items():
        pool = pools.get(CONFIGS[config].dataset) if config in CONFIGS else None
        if pool is not None and len(pool.configs) > 1:
            block["pooled_tasks"] = pool.result()


def _key(family: str) -> str:
    return family.replace("-", "_")


def paired_values(pred: set[str], gold: set[str], classes: Sequence[str],
                  scores: dict[str, float] | None = None) -> dict[str, PairedRow]:
    """One answer's rows for the paired tests: exact match (McNemar; from `scores`, as
    computed when it was parsed, when given) and per-class TP, FP and FN (the paired
    bootstrap of macro F1)."""
    exact = scores["exact_match"] if scores else float(pred == gold)
    return {
        "exact match": PairedRow("correct", (float(exact),)),
        "macro F1": PairedRow("macro_f1", (
            *[float(c in pred and c in gold) for c in classes],
            *[float(c in pred and c not in gold) for c in classes],
            *[float(c in gold and c not in pred) for c in classes])),
    }


def prompt_effect(first: PairedCollector | None, second: PairedCollector | None,
                  first_name: str, second_name: str) -> dict[str, Any]:
    """Prompt against prompt on the same rows (those both families scored): McNemar's exact
    test on exact match and a paired bootstrap of the macro-F1 difference (second - first).
    Absent with a reason when fewer than two rows were scored under both."""
    effect: dict[str, Any] = {"first": first_name, "second": second_name}
    if first is None or second is None:
        effect["unavailable"] = "no row was scored under both prompts"
        return effect
    common, dropped = first.common(second)
    other, dropped_other = second.common(first)
    effect["n_pairs"] = len(common.rows.get("exact match") or ())
    if dropped or dropped_other:
        effect["n_unpaired"] = dropped + dropped_other  # scored under one prompt only
    if effect["n_pairs"] < 2:
        effect["unavailable"] = (f"{effect['n_pairs']} rows were scored under both prompts; "
                                 "a paired test needs two")
        return effect
    results, _ = paired(common, other, (f"with the {first_name} prompt",
                                        f"with the {second_name} prompt"))
    for result in results:
        effect[result.key.replace(" ", "_").lower()] = {
            "test": result.test, "first": result.a, "second": result.b,
            "difference": result.difference, "detail": result.detail, "p": result.p_value,
            "significant": result.significant}
        if result.interval is not None:
            effect[result.key.replace(" ", "_").lower()]["difference_ci95"] = \
                list(result.interval)
    return effect


HEADLINE = "strict"


def protocol_view(blocks: dict[str, Any], classes: Sequence[str], config: str
                  ) -> dict[str, Any]:
    """Why published SalBench numbers differ, from the same answers: the headline (strict
    parser, macro F1 over every class, as the paper), lenient parsing, sample-averaged F1
    (lmms-eval's `sample_f1`) and, for O3, lmms-eval main's mean over
    three classes. A figure that cannot be computed is absent with a reason."""
    strict, lenient = blocks[HEADLINE], blocks["lenient"]
    view: dict[str, Any] = {}
    for key, block, metric in (("headline_macro_f1", strict, "macro_f1"),
                               ("lenient_macro_f1", lenient, "macro_f1"),
                               ("sample_f1", strict, "sample_f1")):
        if metric in block:
            view[key] = block[metric]
        else:
            view[f"{key}_unavailable"] = block.get("unavailable", "not computed")
    if config.startswith("O3"):
        per_class = strict.get("per_class") or {}
        if all(c in per_class for c in LMMS_EVAL_O3_CLASSES):
            view["lmms_eval_o3_3class_f1"] = sum(
                per_class[c]["f1"] for c in LMMS_EVAL_O3_CLASSES) / len(LMMS_EVAL_O3_CLASSES)
        else:
            view["lmms_eval_o3_3class_f1_unavailable"] = strict.get(
                "unavailable", "per-class F1 not computed")
    return view


def summarize_config(records: Iterable[Any], classes: Sequence[str]) -> dict[str, Any]:
    """`{"strict": {...}, "lenient": {...}}` for one config's records, streamed."""
    tally = ConfigTally(classes)
    for record in records:
        tally.add(record)
    return tally.result()


# -- metrics.json's shape -------------------------------------------------------------------



class PromptTest(MetricsBlock):
    """A paired test of the headline prompt against another (`stats.paired`)."""

    test: str
    first: float
    second: float
    difference: float
    detail: str
    p: float | None = None
    significant: bool
    difference_ci95: Interval | None = None


class PromptEffect(MetricsBlock):
    """The headline prompt against another on the rows both scored (`prompt_effect`)."""

    first: str
    second: str
    unavailable: str | None = None
    n_pairs: int | None = None
    n_unpaired: int | None = None
    exact_match: PromptTest | None = None
    macro_f1: PromptTest | None = None


class TargetAbsentMetrics(MetricsBlock):
    """One parser's answers on a config's target-absent rows (`AbsentTally.result`)."""

    n: int = Field(description="Answered target-absent rows.")
    n_errors: int = Field(description="Target-absent rows whose request failed.")
    false_alarms: int = Field(description="Answers that name a feature.")
    correct_rejections: int = Field(description="Answers that say no feature differs.")
    n_unparsed: int = Field(description="Neither (strict only: e.g. \"None.\").")
    by_feature_named: dict[str, int] = Field(description="Per class, the false alarms naming "
                                             "it.")
    unavailable: str | None = None
    false_alarm_rate: float | None = Field(None, description="false_alarms / n.")
    false_alarm_rate_ci95: Interval | None = Field(None, description="Its 95% Wilson "
                                                   "interval.")


class PooledTasks(MetricsBlock):
    """An image set's tasks together (`TaskPool.result`, headline parser and prompt): the
    intervals draw scenes, each with all its answers."""

    configs: list[str] = Field(description="The configs pooled (one image set's tasks).")
    n: int
    n_errors: int
    unavailable: str | None = None
    n_images: int | None = Field(None, description="Scenes among the pooled answers.")
    exact_match: float | None = None
    exact_match_se: float | None = None
    exact_match_ci95: Interval | None = None
    exact_match_ci95_clusters: str | None = Field(None, description="What the interval "
                                                  "resamples as one: \"image\".")
    exact_match_ci95_n_clusters: int | None = None
    exact_match_ci95_unavailable: str | None = None
    macro_f1: float | None = None
    macro_f1_se: float | None = None
    macro_f1_ci95: Interval | None = None
    macro_f1_ci95_clusters: str | None = None
    macro_f1_ci95_n_clusters: int | None = None
    macro_f1_ci95_unavailable: str | None = None
    sample_f1: float | None = None
    sample_f1_se: float | None = None
    sample_f1_ci95: Interval | None = None
    sample_f1_ci95_clusters: str | None = None
    sample_f1_ci95_n_clusters: int | None = None
    sample_f1_ci95_unavailable: str | None = None


class ConfigMetrics(MetricsBlock):
    """One config's block (`ConfigTally.result`): both parsers, the protocol view (figures
    by name, or `<name>_unavailable` with the reason), and with `--prompt both` the other
    prompt's figures and the paired test between the prompts; with target-absent rows,
    their false alarms."""

    strict: ParserMetrics
    lenient: ParserMetrics
    protocols: dict[str, float | str]
    by_prompt: dict[str, dict[str, ParserMetrics]] | None = None
    prompt_effect: dict[str, PromptEffect] | None = None
    by_difficulty: dict[str, ParserMetrics] | None = None
    by_difficulty_unavailable: str | None = None
    target_absent: dict[str, TargetAbsentMetrics] | None = Field(
        None, description="Per parser; only when the config had target-absent rows.")
    target_absent_by_prompt: dict[str, dict[str, TargetAbsentMetrics]] | None = Field(
        None, description="The same per other prompt family (--prompt both).")
    pooled_tasks: PooledTasks | None = Field(
        None, description="The config's image set over every task in the run (two or more).")


class SalBenchMetrics(RootModel[dict[str, ConfigMetrics]]):
    """metrics.json of SalBench: a block per config, keyed by its name."""
