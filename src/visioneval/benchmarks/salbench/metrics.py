"""SalBench metrics, as the reference aggregates them (lmms-eval salbench utils.py):

- exact_match: mean over samples of set equality between prediction and answer;
- per_class: TP/FP/FN pooled over samples for each class, P = tp/(tp+fp+1e-8),
  R = tp/(tp+fn+1e-8), F1 = 2PR/(P+R+1e-8);
- macro_f1: the plain mean of per-class F1 over the whole class list (3 for P3, 7 for O3):
  the leaderboard's "F1 Overall" and the number the paper's abstract quotes;
- sample_f1: per-sample set F1 averaged (lmms-eval reports it; it is not the paper's F1).

Failed requests are counted in n_errors and left out of every score.

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
from visioneval.core.runfiles import Interval, MetricsBlock
from visioneval.metrics.labelsets import ParserMetrics, ParserTally
from visioneval.stats.binomial import wilson
from visioneval.stats.paired import PairedCollector, PairedRow, paired

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


class SalBenchMetrics(RootModel[dict[str, ConfigMetrics]]):
    """metrics.json of SalBench: a block per config, keyed by its name."""
