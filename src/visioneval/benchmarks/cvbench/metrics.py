"""metrics.json for CV-Bench, all fractions.

Per label set and protocol (`results`), and per image control (`controls`), one block with
every figure the three implementations report, computed on that protocol's own verdicts:
- `accuracy`: right over scored items, all sources pooled (the micro mean lmms-eval reports,
  [L] utils.py:55-64); `accuracy_2d` / `accuracy_3d` the same within a type (lmms-eval's
  cv_bench_2d / cv_bench_3d tasks);
- `per_source` and `per_task`: accuracy within each (the paper's scripts report per source,
  [P] ade_test.py:65-76);
- `overall_2d`: the mean of the ADE20K and COCO accuracies (VLMEvalKit's CV-Bench-2D
  Overall, [V] image_mcq.py:1279-1298); `overall_3d`: the Omni3D accuracy (CV-Bench-3D);
- `cv_bench`: 1/2 * [(acc_ADE20K + acc_COCO)/2 + acc_Omni3D], the paper's combined score
  (the formula [L] utils.py:67-79 keeps as the "original formula").
A failed request is counted in `n_errors`, never scored wrong. Intervals resample whole
images (the cluster bootstrap of `stats.bootstrap`): items asked about one image move
together. `chance` is the mean over the items of 1/(number of options).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from visioneval.benchmarks.cvbench.judging import RANDOM
from visioneval.benchmarks.cvbench.spec import (
    JUDGED,
    MICRO,
    PAPER,
    SOURCES,
    TASKS,
    TYPES,
    VLMEVALKIT,
    score_key,
)
from visioneval.core.gap import LABELS, GapShare, GapUnit
from visioneval.core.records import Record
from visioneval.core.runfiles import Interval, MetricsBlock
from visioneval.core.variant_ids import family_of
from visioneval.harness.differences import Differences, DifferenceSummary
from visioneval.stats.bootstrap import Outcomes, attach, summaries

if TYPE_CHECKING:
    import numpy as np

    from visioneval.benchmarks.cvbench.options import CvBenchOptions
    from visioneval.harness.corrections import Corrections

STORED = ""  # the family of records with the stored images
FIGURES = ("accuracy", "overall_2d", "overall_3d", "cv_bench")
LMMS_MICRO = ("lmms-eval reports cv_bench_acc, the mean over every item of the config "
              "(utils.py:55-64, named by _default_template_yaml:8-10); the paper's "
              "source-balanced formula cv_bench_default_aggregate_results (utils.py:67-79) "
              "is named by no task YAML")
VLMEVALKIT_SPLIT = ("VLMEvalKit has two datasets and no combined score: CV-Bench-2D Overall "
                    "is the mean of the ADE20K and COCO accuracies (image_mcq.py:1279-1298), "
                    "CV-Bench-3D the Omni3D accuracy (report_acc, image_mcq.py:1270-1273)")


def _statistic(sums: np.ndarray, n: int) -> np.ndarray:
    """accuracy, overall_2d, overall_3d and cv_bench from the summed rows (see `_row`)."""
    # numpy loads when intervals are computed: `visioneval --help` imports this module
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        acc = sums[:, 0] / n
        ade = sums[:, 1] / sums[:, 2]
        coco = sums[:, 3] / sums[:, 4]
        omni = sums[:, 5] / sums[:, 6]
    two = (ade + coco) / 2
    return np.stack([acc, two, omni, (two + omni) / 2], axis=1)


def _row(correct: float, source: str) -> tuple[float, ...]:
    """correct, then (right, one) for ADE20K, COCO and Omni3D: the sums every figure
    needs."""
    out = [correct]
    for name in SOURCES:
        mine = source == name
        out += [correct if mine else 0.0, 1.0 if mine else 0.0]
    return tuple(out)


class Tally:
    """One protocol's verdicts under one label set."""

    __slots__ = ("outcomes", "errors", "unparsed", "chance", "by_source", "by_task")

    def __init__(self) -> None:
        self.outcomes = Outcomes(7)
        self.errors = 0
        self.unparsed = 0
        self.chance = 0.0
        self.by_source: dict[str, list[float]] = {}
        self.by_task: dict[str, list[float]] = {}

    def add(self, record: Record, correct: float, shown: str) -> None:
        meta = record.metadata
        source, task = str(meta["source"]), str(meta["task"])
        self.outcomes.add(str(meta["item"]), _row(correct, source), image_of(record))
        self.unparsed += not shown
        self.chance += 1 / max(1, len(meta.get("choices") or ()))
        for key, table in ((source, self.by_source), (task, self.by_task)):
            cell = table.setdefault(key, [0.0, 0.0])
            cell[0] += correct
            cell[1] += 1

    def block(self) -> dict[str, Any]:
        n = len(self.outcomes)
        out: dict[str, Any] = {"n": n, "n_errors": self.errors, "unparsed": self.unparsed}
        if not n:
            out["unavailable"] = "no item scored"
            return out
        out["chance"] = self.chance / n
        out["per_source"] = {s: _cell(self.by_source[s]) for s in SOURCES
                             if s in self.by_source}
        out["per_task"] = {t: _cell(self.by_task[t]) for t in TASKS if t in self.by_task}
        right = sum(c[0] for c in self.by_source.values())
        out["accuracy"] = right / n
        for kind in ("2D", "3D"):
            cells = [c for s, c in self.by_source.items() if TYPES[s] == kind]
            if cells:
                out[f"accuracy_{kind.lower()}"] = sum(c[0] for c in cells) / \
                    sum(c[1] for c in cells)
        acc = {s: v["accuracy"] for s, v in out["per_source"].items()}
        if "ADE20K" in acc and "COCO" in acc:
            out["overall_2d"] = (acc["ADE20K"] + acc["COCO"]) / 2
        else:
            out["overall_2d_unavailable"] = "needs items of both ADE20K and COCO"
        if "Omni3D" in acc:
            out["overall_3d"] = acc["Omni3D"]
        else:
            out["overall_3d_unavailable"] = "no Omni3D item scored"
        if "overall_2d" in out and "overall_3d" in out:
            out["cv_bench"] = (out["overall_2d"] + out["overall_3d"]) / 2
        else:
            out["cv_bench_unavailable"] = "needs items of ADE20K, COCO and Omni3D"
        found = summaries(self.outcomes.matrix(), _statistic, FIGURES,
                          self.outcomes.clusters("image"), shares=(0, None, None, None))
        attach(out, {k: _finite(v) for k, v in found.items()})
        return out


def image_of(record: Record) -> str:
    """The cluster an item is drawn with: its image (items asked about one image move
    together)."""
    meta = record.metadata
    return str(meta.get("image_key") or meta["item"])


def protocol_of(record: Record, protocols: Sequence[str]) -> str | None:
    """The protocol whose prompt this record answered, when it is asked and the item's
    source is one of CV-Bench's; None otherwise (left out of every figure)."""
    protocol = record.metadata.get("protocol")
    if protocol not in protocols or record.metadata.get("source") not in SOURCES:
        return None
    return str(protocol)


def verdict(record: Record, key: str) -> float | None:
    """The verdict under a score key; None when the request failed (an error, never a
    wrong answer) or the key did not score it."""
    if not record.ok or key not in record.scores:
        return None
    return float(record.scores[key]["correct"])


def _cell(cell: list[float]) -> dict[str, Any]:
    return {"accuracy": cell[0] / cell[1], "n": int(cell[1])}


def _finite(result: dict[str, Any]) -> dict[str, Any]:
    """A figure's interval, or why not when some resample lacked one of its sources."""
    span = result.get("ci95")
    if span is not None and not all(math.isfinite(v) for v in span):
        return {"unavailable": "some resamples of images hold no item of a source"}
    return result


def summarize(records: Iterable[Record], options: CvBenchOptions,
              corrections: Corrections) -> dict[str, Any]:
    """metrics.json from the records alone (the newest record per sample), in one pass."""
    protocols, label_sets = options.protocols, options.label_sets
    judging = options.judge_model is not None and VLMEVALKIT in protocols
    keys = [*protocols, JUDGED] if judging else list(protocols)
    asked: Counter[str] = Counter()
    tallies: dict[tuple[str, str], Tally] = {}
    differences = _differences(protocols, label_sets)
    for record in records:
        protocol = protocol_of(record, protocols)
        if protocol is None:
            continue
        family = family_of(record) or STORED
        if family == STORED and differences is not None:
            differences.add(record)
        for label_set in label_sets:
            key = score_key(protocol, label_set)
            tally = tallies.setdefault((family, key), Tally())
            correct = verdict(record, key)
            if not record.ok:
                tally.errors += 1
            elif correct is not None:
                tally.add(record, correct, str(record.parsed.get(key, "")))
            if judging and protocol == VLMEVALKIT:
                _add_judged(tallies.setdefault((family, score_key(JUDGED, label_set)),
                                               Tally()), record, label_set)
        if judging and protocol == VLMEVALKIT and record.ok and family == STORED:
            asked.update(_judge_outcome(record))
    out: dict[str, Any] = {"protocols": list(protocols), "label_sets": list(label_sets)}
    out["results"] = _blocks(tallies, STORED, keys, label_sets)
    controls = sorted({family for family, _ in tallies} - {STORED})
    if controls:
        out["controls"] = {c: _blocks(tallies, c, keys, label_sets) for c in controls}
    if judging:
        out["judge"] = {"model": options.judge_model, "reading": JUDGED,
                        **{k: asked[k] for k in JUDGE_OUTCOMES}}
    if len(label_sets) == 2:
        out["label_set_difference"] = _label_set_difference(out["results"])
    out["corrections"] = {"version": corrections.version,
                          "listed": len(corrections.corrections)}
    if differences is not None:
        differences.finish()
        summary = differences.summary()
        _notes(summary, out["results"][label_sets[0]], protocols)
        out["differences"] = summary.model_dump()
    return out


def item_units(records: Iterable[Record], protocols: Sequence[str],
               label_sets: Sequence[str]) -> Iterator[GapUnit]:
    """Each answer's part of its protocol's headline under every label set, drawn with its
    image as the intervals draw items (`visioneval explain`): lmms-eval's mean over items is
    one stratum; the paper's combined score, which VLMEvalKit's readings are compared on,
    one stratum per source (weighed by `SOURCE_WEIGHTS`). A failed request is in no
    headline; VLMEvalKit's judged reading is none."""
    for record in records:
        protocol = protocol_of(record, protocols)
        if protocol is None:
            continue
        stratum = "all" if protocol == MICRO else str(record.metadata["source"])
        shares = {(protocol, labels): GapShare(stratum, correct, 1.0) for labels in LABELS
                  if labels in label_sets
                  and (correct := verdict(record, score_key(protocol, labels))) is not None}
        if shares:
            yield GapUnit(image_of(record), shares)


JUDGE_OUTCOMES = ("asked", "read", "no_option", "random", "failed")


def _add_judged(tally: Tally, record: Record, label_set: str) -> None:
    """The judged reading's verdict; a failed judge request (no verdict) is an error."""
    key = score_key(JUDGED, label_set)
    correct = verdict(record, key)
    if correct is None:
        tally.errors += 1
    else:
        tally.add(record, correct, str(record.parsed.get(key, "")))


def _judge_outcome(record: Record) -> list[str]:
    """What the judge did for one answer: nothing (the rules read it), or asked and then
    read an option, named none (Z), left VLMEvalKit's random pick, or failed."""
    reading = record.parsed.get(f"{JUDGED} reading")
    if not isinstance(reading, dict):
        return []
    if "error" in reading:
        return ["asked", "failed"]
    if reading.get("how") == RANDOM:
        return ["asked", "random"]
    return ["asked", "read" if record.parsed.get(JUDGED) else "no_option"]


def _blocks(tallies: dict[tuple[str, str], Tally], family: str, protocols: Sequence[str],
            label_sets: Sequence[str]) -> dict[str, Any]:
    return {label_set: {p: (tallies.get((family, score_key(p, label_set))) or Tally()).block()
                        for p in protocols}
            for label_set in label_sets}


def _label_set_difference(results: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each figure under the corrected labels minus under the published ones."""
    out: dict[str, dict[str, float]] = {}
    for protocol, published in results["original"].items():
        fixed = results["corrected"].get(protocol, {})
        out[protocol] = {f: fixed[f] - published[f] for f in FIGURES
                         if isinstance(published.get(f), float)
                         and isinstance(fixed.get(f), float)}
    return out


def _differences(protocols: Sequence[str], label_sets: Sequence[str]) -> Differences | None:
    if PAPER not in protocols or len(protocols) < 2:
        return None
    return Differences(score_key(PAPER, label_sets[0]),
                       [score_key(p, label_sets[0]) for p in protocols])


def _notes(summary: DifferenceSummary, results: dict[str, Any],
           protocols: Sequence[str]) -> None:
    """What is not per item: how each harness aggregates, in points on this run."""
    paper = results.get(PAPER, {})
    for protocol in protocols:
        mine = results.get(protocol, {})
        if protocol == "lmms-eval" and _both(mine, "accuracy", "cv_bench"):
            points = _points(100 * (mine["accuracy"] - mine["cv_bench"]))
            summary.add_note(protocol, "aggregation",
                             f"{LMMS_MICRO}: on lmms-eval's own verdicts the micro mean is "
                             f"{points:+.1f} points from the paper's formula", points)
        if protocol == "vlmevalkit" and _both(mine, "accuracy_2d", "overall_2d"):
            points = _points(100 * (mine["overall_2d"] - mine["accuracy_2d"]))
            summary.add_note(protocol, "aggregation",
                             f"{VLMEVALKIT_SPLIT}; its 2D Overall is the paper's 2D half "
                             f"({points:+.1f} points from the 2D micro mean); the paper's "
                             "combined score is the mean of the two numbers")
        if protocol != PAPER and _both(mine, "cv_bench", "cv_bench") and \
                _both(paper, "cv_bench", "cv_bench"):
            points = _points(100 * (mine["cv_bench"] - paper["cv_bench"]))
            summary.add_note(protocol, "prompt and extraction, on the combined score",
                             f"the paper's formula on {protocol}'s verdicts is "
                             f"{points:+.1f} points from the paper's", points)


def _points(value: float) -> float:
    """Percentage points to one decimal, with no "-0.0"."""
    return round(value, 1) + 0.0


def _both(block: dict[str, Any], first: str, second: str) -> bool:
    return isinstance(block.get(first), float) and isinstance(block.get(second), float)


# -- metrics.json's shape -------------------------------------------------------------------

class Cell(MetricsBlock):
    accuracy: float
    n: int


class ProtocolBlock(MetricsBlock):
    """One protocol under one label set: every figure, on its own verdicts."""

    n: int
    n_errors: int
    unparsed: int = Field(description="Answers the protocol read no option letter from "
                          "(scored wrong).")
    unavailable: str | None = None
    chance: float | None = None
    per_source: dict[str, Cell] = {}
    per_task: dict[str, Cell] = {}
    accuracy: float | None = None
    accuracy_2d: float | None = None
    accuracy_3d: float | None = None
    overall_2d: float | None = None
    overall_2d_unavailable: str | None = None
    overall_3d: float | None = None
    overall_3d_unavailable: str | None = None
    cv_bench: float | None = None
    cv_bench_unavailable: str | None = None
    accuracy_se: float | None = None
    accuracy_ci95: Interval | None = None
    accuracy_ci95_clusters: str | None = None
    accuracy_ci95_n_clusters: int | None = None
    accuracy_ci95_unavailable: str | None = None
    overall_2d_se: float | None = None
    overall_2d_ci95: Interval | None = None
    overall_2d_ci95_clusters: str | None = None
    overall_2d_ci95_n_clusters: int | None = None
    overall_2d_ci95_unavailable: str | None = None
    overall_3d_se: float | None = None
    overall_3d_ci95: Interval | None = None
    overall_3d_ci95_clusters: str | None = None
    overall_3d_ci95_n_clusters: int | None = None
    overall_3d_ci95_unavailable: str | None = None
    cv_bench_se: float | None = None
    cv_bench_ci95: Interval | None = None
    cv_bench_ci95_clusters: str | None = None
    cv_bench_ci95_n_clusters: int | None = None
    cv_bench_ci95_unavailable: str | None = None


class CorrectionsBlock(MetricsBlock):
    """The label corrections manifest the run read (corrections.json)."""

    version: str
    listed: int = Field(description="How many corrections it lists.")


class JudgeBlock(MetricsBlock):
    """VLMEvalKit's judge step over the answers to its prompt (stored images)."""

    model: str
    reading: str = Field(description="The results key of the judged reading.")
    asked: int = Field(description="Answers its rules left, sent to the judge.")
    read: int = Field(description="The judge named an option.")
    no_option: int = Field(description="The judge said Z: no option (wrong).")
    random: int = Field(description="Three unreadable replies: VLMEvalKit's random pick.")
    failed: int = Field(description="A judge request failed: an error, not scored.")


class CvBenchMetrics(MetricsBlock):
    """metrics.json of CV-Bench: every figure per label set and protocol."""

    protocols: list[str] = Field(description="The protocols scored, the paper's first.")
    label_sets: list[str] = Field(description="original, corrected, or both.")
    results: dict[str, dict[str, ProtocolBlock]] = Field(
        description="label set -> protocol -> its figures, with the stored images.")
    controls: dict[str, dict[str, dict[str, ProtocolBlock]]] | None = Field(
        None, description="blind or blank -> label set -> protocol: without the image.")
    label_set_difference: dict[str, dict[str, float]] | None = Field(
        None, description="protocol -> figure: corrected minus published labels.")
    corrections: CorrectionsBlock
    differences: DifferenceSummary | None = Field(
        None, description="Why the protocols differ, item by item "
        "(visioneval.harness.differences).")
    judge: JudgeBlock | None = Field(
        None, description="With --judge-model: what VLMEvalKit's judge did; its reading is "
        "results' `vlmevalkit+judge`.")


__all__ = ["CvBenchMetrics", "item_units", "summarize"]
