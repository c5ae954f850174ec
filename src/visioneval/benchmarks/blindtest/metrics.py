"""metrics.json for BlindTest, from the records alone, streamed once.

Per protocol and label set (`original`: the Hub's groundtruth; `corrected`: with
corrections.json applied), blocks of {n, n_errors, correct, unparsed, accuracy} with 95%
intervals (a bootstrap over items, each item's image drawn whole):
- paper: `tasks`, the eight columns of the paper's Table 1 (the two grid subtasks are one,
  [L] README.md line 28), `task_mean` (their unweighted mean, the paper's headline),
  `subtasks` (the Hub's nine task labels), `accuracy` (every row, micro);
- lmms-eval: `accuracy` (its micro mean over rows, [L] vlmsareblind.yaml lines 16-18),
  `tasks` and `task_mean` computed over every task, and `lmms_task_mean` /
  `lmms_by_task` as lmms-eval prints them: its dict is built from the tasks with at least
  one right answer ([L] utils.py line 109), so a task with none is left out of the mean
  (`dropped` names them);
- vlmevalkit: `subtasks` only, one accuracy per Hub task label, no overall ([V]
  image_mcq.py lines 2610-2611);
- every protocol: `parameters`, accuracy per task, per metadata key and value (line
  thickness, distance, count, ...) with a Wilson 95% interval, so accuracy can be read
  against each task's own knob (the circles' gap: accuracy per gap value);
- every protocol: `thresholds`, per magnitude (magnitude.py: the circles' gap, the line
  plots' closest approach) the points per level and the fitted threshold with its interval
  or "not reached" and its reason (thresholds.py).
`differences`: why the protocols score the same items differently, on the first label set.
Failed requests are counted in `n_errors` and scored nowhere."""

# Imports inside functions: numpy loads when an interval is computed, as in stats/bootstrap.

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from visioneval.benchmarks.blindtest import protocols
from visioneval.benchmarks.blindtest.labels import manifest
from visioneval.benchmarks.blindtest.magnitude import BY_TASK, MAGNITUDES
from visioneval.benchmarks.blindtest.spec import (
    LMMS,
    PAPER,
    PAPER_TASKS,
    TASKS,
    VLMEVALKIT,
    paper_task,
)
from visioneval.benchmarks.blindtest.thresholds import FitKey, LevelTally, threshold
from visioneval.core.gap import LABELS, GapShare, GapUnit
from visioneval.core.records import Record
from visioneval.harness.differences import Differences, DifferenceSummary
from visioneval.stats.binomial import wilson
from visioneval.stats.bootstrap import Outcomes, attach, mean_statistic, summaries

MAX_VALUES = 40  # a metadata key with more distinct values is an id, not a parameter


class Tally:
    """One slice's outcomes: right/wrong per scored item, errors and unparsed answers."""

    def __init__(self) -> None:
        self.rows = Outcomes(1)
        self.errors = 0
        self.unparsed = 0

    def add(self, item: str, right: bool, unread: bool) -> None:
        self.rows.add(item, [float(right)], item)
        self.unparsed += unread

    def block(self) -> dict[str, Any]:
        n = len(self.rows)
        out: dict[str, Any] = {"n": n, "n_errors": self.errors, "unparsed": self.unparsed}
        if n == 0:
            out["unavailable"] = "no scored row"
            return out
        matrix = self.rows.matrix()
        out["correct"] = int(matrix.sum())
        out["accuracy"] = float(matrix.sum()) / n
        attach(out, summaries(matrix, mean_statistic, ["accuracy"], self.rows.clusters()))
        return out


class ParameterTally:
    """Per task, per metadata key and value: n, right, accuracy and its Wilson interval
    (each row is its own image, so rows are independent within a cell)."""

    def __init__(self) -> None:
        self.cells: dict[str, dict[str, dict[str, list[int]]]] = {}

    def add(self, task: str, params: dict[str, Any], right: bool) -> None:
        keys = self.cells.setdefault(task, {})
        for key, value in params.items():
            cell = keys.setdefault(key, {}).setdefault(str(value), [0, 0])
            cell[0] += 1
            cell[1] += right

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for task, keys in self.cells.items():
            kept = {}
            for key, values in keys.items():
                if len(values) > MAX_VALUES:
                    continue
                kept[key] = {v: {"n": n, "correct": c, "accuracy": c / n,
                                 "accuracy_ci95": list(wilson(c, n))}
                             for v, (n, c) in sorted(values.items(), key=_value_order)}
            out[task] = kept
        return out


def _value_order(entry: tuple[str, list[int]]) -> tuple[int, float, str]:
    try:
        return (0, float(entry[0]), entry[0])
    except ValueError:
        return (1, 0.0, entry[0])


class ProtocolTally:
    """Every figure of one protocol under one label set."""

    def __init__(self, protocol: str, fits: dict[FitKey, dict[str, Any]]):
        self.protocol = protocol
        self.fits = fits
        self.levels: dict[str, LevelTally] = {}
        self.seen: set[str] = set()
        self.all = Tally()
        self.subtasks = {t: Tally() for t in TASKS}
        self.tasks = {t: Tally() for t in PAPER_TASKS}
        self.mean_rows = Outcomes(2 * len(PAPER_TASKS))
        self.parameters = ParameterTally()

    def error(self, task: str) -> None:
        for tally in (self.all, self.subtasks[task], self.tasks[paper_task(task)]):
            tally.errors += 1

    def add(self, record: Record, task: str, label: str) -> None:
        right, unread = verdict(self.protocol, record, task, label)
        item = item_of(record)
        for tally in (self.all, self.subtasks[task], self.tasks[paper_task(task)]):
            tally.add(item, right, unread)
        row = [0.0] * (2 * len(PAPER_TASKS))
        k = PAPER_TASKS.index(paper_task(task))
        row[2 * k], row[2 * k + 1] = float(right), 1.0
        self.mean_rows.add(item, row, item)
        params = record.metadata.get("parameters")
        self.parameters.add(task, params if isinstance(params, dict) else {}, right)
        self.seen.add(task)
        level = record.metadata.get("level")
        if task in BY_TASK and isinstance(level, (int, float)) and level > 0:
            self.levels.setdefault(task, LevelTally()).add(float(level), right)

    def result(self) -> dict[str, Any]:
        subtasks = {t: b.block() for t, b in self.subtasks.items() if _seen(b)}
        out: dict[str, Any] = {"subtasks": subtasks,
                               "parameters": self.parameters.result(),
                               "thresholds": {m.name: threshold(m, self.levels.get(m.task),
                                                                self.fits)
                                              for m in MAGNITUDES if m.task in self.seen}}
        if self.protocol == VLMEVALKIT:
            return out  # one accuracy per task label, no overall
        tasks = {t: b.block() for t, b in self.tasks.items() if _seen(b)}
        out["tasks"] = tasks
        out["accuracy"] = self.all.block()
        out["task_mean"] = self.task_mean(tasks)
        if self.protocol == LMMS:
            out.update(lmms_printed(tasks))
        return out

    def task_mean(self, tasks: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """The unweighted mean of the tasks' accuracies (the paper's headline), with a
        bootstrap over items."""
        scored = [t for t in PAPER_TASKS if "accuracy" in tasks.get(t, {})]
        if not scored:
            return {"unavailable": "no task scored"}
        block: dict[str, Any] = {
            "accuracy": sum(tasks[t]["accuracy"] for t in scored) / len(scored),
            "n": sum(tasks[t]["n"] for t in scored), "tasks": len(scored)}
        if len(scored) < len(PAPER_TASKS):
            block["note"] = f"mean of the {len(scored)} tasks in the run, not all 8"
        found = summaries(self.mean_rows.matrix(), _task_mean_statistic, ["accuracy"],
                          self.mean_rows.clusters())
        import numpy as np

        if "ci95" in found["accuracy"] and not np.isfinite(found["accuracy"]["ci95"]).all():
            found = {"accuracy": {"unavailable": "a task is missing from some resamples"}}
        attach(block, found)
        return block


def verdict(protocol: str, record: Record, task: str, label: str) -> tuple[bool, bool]:
    """Whether the protocol's reading of the answer matches `label`, and whether it read
    none (unparsed: scored wrong)."""
    reading = protocols.read(protocol, task, record.response.text or "") \
        if protocol == VLMEVALKIT else str(record.parsed.get(protocol, ""))
    return protocols.correct(protocol, task, reading, label), \
        protocols.unparsed(protocol, task, reading)


def item_of(record: Record) -> str:
    """The row, and the cluster it is drawn with: each row is its own image."""
    return str(record.metadata.get("item", record.id))


def labels_of(record: Record) -> dict[str, str]:
    """The row's label per label set: the Hub's groundtruth, and corrected (the
    groundtruth where corrections.json lists nothing)."""
    target = record.target if isinstance(record.target, dict) else {}
    original = str(target.get("groundtruth", ""))
    return {"original": original, "corrected": str(target.get("corrected", original))}


def counted(record: Record, protocols_: Sequence[str]) -> tuple[str, str] | None:
    """(protocol, Hub task) of a record the metrics count; None when its protocol is not
    asked or its task is not BlindTest's."""
    family = record.metadata.get("family", PAPER)
    task = record.metadata.get("task")
    if family not in protocols_ or task not in TASKS:
        return None
    return str(family), str(task)


def _seen(tally: Tally) -> bool:
    return len(tally.rows) + tally.errors > 0


def _task_mean_statistic(sums: Any, n: int) -> Any:
    import numpy as np

    right, count = sums[:, 0::2], sums[:, 1::2]
    present = count.sum(axis=0) > 0  # tasks not in the run are not in the mean
    with np.errstate(divide="ignore", invalid="ignore"):
        share = right[:, present] / count[:, present]
    return np.mean(share, axis=1, keepdims=True)


def lmms_printed(tasks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """`accuracy_by_task` as lmms-eval computes it ([L] utils.py lines 96-112): the per-task
    dict holds only tasks with a right answer (line 109), and `task_mean` averages that
    dict (line 110). `dropped`: tasks with none, left out; `points`: what leaving them out
    adds to the task mean (percentage points)."""
    kept = {t: b["accuracy"] for t, b in tasks.items() if b.get("correct", 0) > 0}
    dropped = [t for t, b in tasks.items() if "accuracy" in b and b.get("correct", 0) == 0]
    out: dict[str, Any] = {"lmms_by_task": kept, "dropped": dropped}
    if not kept:
        out["lmms_task_mean_unavailable"] = "no task has a right answer: lmms-eval divides " \
            "by zero (utils.py line 110)"
        return out
    out["lmms_task_mean"] = sum(kept.values()) / len(kept)
    every = [b["accuracy"] for b in tasks.values() if "accuracy" in b]
    out["dropped_points"] = 100 * (out["lmms_task_mean"] - sum(every) / len(every))
    return out


def summarize(records: Iterable[Record], protocols_: Sequence[str],
              label_sets: Sequence[str]) -> dict[str, Any]:
    """metrics.json from the records (the newest per sample), in one pass."""
    fits: dict[FitKey, dict[str, Any]] = {}
    tallies = {ls: {p: ProtocolTally(p, fits) for p in protocols_} for ls in label_sets}
    differences = Differences(PAPER, protocols_) if PAPER in protocols_ and \
        len(protocols_) > 1 else None
    first = label_sets[0]
    relabelled = 0
    for record in records:
        found = counted(record, protocols_)
        if found is None:
            continue
        family, task = found
        labels = labels_of(record)
        same = labels["corrected"] == labels["original"]
        relabelled += family == protocols_[0] and not same
        for label_set, by in tallies.items():
            tally = by[family]
            if not record.ok or family not in record.scores:
                tally.error(task)
                continue
            tally.add(record, task, labels[label_set])
        if differences is not None and (first == "original" or same):
            differences.add(record)
    out: dict[str, Any] = {p: {ls: by[p].result() for ls, by in tallies.items()}
                           for p in protocols_}
    summary = _summary(differences, out, protocols_, first) if differences else None
    out["differences"] = summary.model_dump() if summary else None
    out["labels"] = {"sets": list(label_sets), "manifest": manifest().version,
                     "relabelled": relabelled}
    return out


def item_units(records: Iterable[Record], protocols_: Sequence[str],
               label_sets: Sequence[str]) -> Iterator[GapUnit]:
    """Each answer's part of the headlines `visioneval explain` reads, drawn with its row
    as the intervals draw them: the paper's mean of its eight tasks (one stratum per Table 1
    task, equal weights, the tasks `task_mean` counts) and lmms-eval's micro accuracy (one
    stratum). A failed request is in no headline; VLMEvalKit reports none."""
    strata = {PAPER: paper_task, LMMS: lambda task: "all"}
    for record in records:
        found = counted(record, protocols_)
        if found is None or found[0] not in strata \
                or not record.ok or found[0] not in record.scores:
            continue
        protocol, task = found
        labels = labels_of(record)
        yield GapUnit(item_of(record), {
            (protocol, s): GapShare(strata[protocol](task),
                                    float(verdict(protocol, record, task, labels[s])[0]), 1.0)
            for s in LABELS if s in label_sets})


def _summary(differences: Differences, out: dict[str, Any], protocols_: Sequence[str],
             first: str) -> DifferenceSummary:
    differences.finish()
    summary = differences.summary()
    if LMMS in protocols_:
        lmms = out[LMMS][first]
        summary.add_note(LMMS, "aggregation", "its main number `accuracy` is the mean over rows "
                         "(micro: line plots are the most rows); the paper's is the mean of "
                         "the eight tasks")
        dropped = lmms.get("dropped") or []
        points = lmms.get("dropped_points")
        what = ("accuracy_by_task's task_mean leaves out every task with no right answer "
                "(utils.py line 109)")
        what += f": here {', '.join(dropped)}" if dropped else ": none here"
        summary.add_note(LMMS, "task_mean", what, points if dropped else None)
    if VLMEVALKIT in protocols_:
        summary.add_note(VLMEVALKIT, "aggregation", "one accuracy per Hub task label (the "
                         "two grids apart), no overall number")
        summary.add_note(VLMEVALKIT, "substring", "touching circles and Olympic counts are "
                         "right when the label is found anywhere in the answer (\"no\" in "
                         "\"not\", \"1\" in \"10\")")
    return summary
