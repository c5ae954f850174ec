"""metrics.json for BLINK, from the records alone, in one pass.

Per protocol and label set: accuracy per task, the unweighted mean of the task accuracies
(`macro`, the paper's "Total", [P] eval/evaluate.py lines 58-63, and lmms-eval's group mean,
`weight_by_size` False) and the mean over every question (`micro`, VLMEvalKit's "Overall", [V]
multiple_choice.py `report_acc`), each with a 95% bootstrap interval: a resample draws clusters
(questions whose first image is the same file; a question alone when no other shares it) over
the whole run and recomputes both means from the drawn questions. A failed request is counted
in n_errors, never scored. A number that cannot be computed is absent with the reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from visioneval.benchmarks.blink.judging import RANDOM
from visioneval.benchmarks.blink.labels import manifest
from visioneval.benchmarks.blink.spec import (
    JUDGED_PROTOCOLS,
    JUDGED_SUFFIX,
    MEAN_OVER_QUESTIONS,
    REFERENCE,
    TASKS,
    UNREAD,
    judged,
    score_key,
)
from visioneval.core.gap import LABELS, GapShare, GapUnit
from visioneval.core.records import Record
from visioneval.harness.corrections import effect_block
from visioneval.harness.differences import Differences, DifferenceSummary, write_run_csv
from visioneval.stats.bootstrap import Outcomes, attach, summaries

if TYPE_CHECKING:
    import numpy as np

CLUSTER = "image"


def macro_micro(tasks: int) -> Callable[[np.ndarray, int], np.ndarray]:
    """The statistic over rows (correct in task t, 1 in task t) for t in tasks: [macro,
    micro]; a task a resample does not draw is left out of that resample's macro mean."""
    def statistic(sums: np.ndarray, n: int) -> np.ndarray:
        import numpy as np  # numpy loads when intervals are computed, not at start

        correct, counts = sums[..., :tasks], sums[..., tasks:]
        with np.errstate(invalid="ignore", divide="ignore"):
            per_task = np.where(counts > 0, correct / np.maximum(counts, 1), np.nan)
        macro = np.nanmean(per_task, axis=-1)
        micro = correct.sum(axis=-1) / np.maximum(counts.sum(axis=-1), 1)
        return np.stack([macro, micro], axis=-1)
    return statistic


def cluster_of(record: Record) -> str:
    """The cluster the intervals draw a question with: its first image's file."""
    return f"{CLUSTER} {record.metadata.get('image', record.id)}"


def verdict(record: Record, key: str, label_set: str) -> float | None:
    """The reading `key`'s verdict under `label_set` (None: the request failed, or the
    answer was not scored that way: counted in n_errors, never as wrong)."""
    return record.scores.get(score_key(key, label_set), {}).get("correct") \
        if record.ok else None


class Tally:
    """One protocol under one label set, fed record by record."""

    def __init__(self) -> None:
        self.n_errors = 0
        self.right: dict[str, float] = {}
        self.seen: Counter[str] = Counter()
        self.rows: list[tuple[str, str, float, str]] = []  # (id, task, correct, cluster)

    def add(self, record: Record, correct: float | None) -> None:
        if correct is None:
            self.n_errors += 1
            return
        task = str(record.metadata["task"])
        self.seen[task] += 1
        self.right[task] = self.right.get(task, 0.0) + correct
        self.rows.append((record.id, task, correct, cluster_of(record)))

    def block(self) -> dict[str, Any]:
        n = sum(self.seen.values())
        block: dict[str, Any] = {"n": n, "n_errors": self.n_errors}
        if not n:
            block["unavailable"] = f"no scored answer ({self.n_errors} failed requests)"
            return block
        tasks = [t for t in TASKS if self.seen[t]]
        per_task = {t: self.right[t] / self.seen[t] for t in tasks}
        block["per_task"] = {t: {"n": self.seen[t], "accuracy": per_task[t]} for t in tasks}
        block["macro"] = sum(per_task.values()) / len(per_task)
        block["micro"] = sum(self.right.values()) / n
        block["n_tasks"] = len(tasks)
        outcomes = Outcomes(2 * len(tasks))
        where = {t: i for i, t in enumerate(tasks)}
        for sample_id, task, correct, cluster in self.rows:
            values = [0.0] * (2 * len(tasks))
            values[where[task]] = correct
            values[len(tasks) + where[task]] = 1.0
            outcomes.add(sample_id, values, cluster)
        attach(block, summaries(outcomes.matrix(), macro_micro(len(tasks)),
                                ("macro", "micro"), outcomes.clusters(CLUSTER)))
        return block


def unreadable(protocol: str, record: Record) -> str | None:
    """Why `protocol` could not read this answer (None: it read an option)."""
    found = record.parsed.get(protocol)
    if protocol.endswith(JUDGED_SUFFIX):
        return judged_unreadable(protocol, record)
    if protocol == REFERENCE:
        return None if found else UNREAD + " (scored wrong)"
    if protocol == "lmms-eval":
        if not found:
            return "no letter at the start (scored wrong)"
        letters = str(record.metadata.get("letters", ""))
        return None if found in letters else "a first letter that is no option (scored wrong)"
    if found == "Z":
        return "Z: a refusal VLMEvalKit knows"
    return None if found else "left to VLMEvalKit's judge model: scored wrong without one"


def judged_unreadable(key: str, record: Record) -> str | None:
    """Why the judged reading `key` names no option (None: it names one; a failed judge
    request is an error, counted in n_errors, not here)."""
    reading = record.parsed.get(f"{key} reading")
    found = record.parsed.get(key)
    if not isinstance(reading, dict):  # the rules read it; the judge was not asked
        return "Z: a refusal VLMEvalKit knows" if found == "Z" else None
    if "error" in reading:
        return None
    if reading.get("how") == RANDOM:
        return f"{RANDOM} (VLMEvalKit's pick: {found})"
    if key.startswith(REFERENCE):
        return None if found else "the judge's reply is no option token (scored wrong)"
    return "Z: the judge matched no option (scored wrong)" if found == "Z" else None


READINGS = {"paper": "analyze_answer's rules; what they leave (the paper's GPT-3.5 matcher's "
                     "turn) is unread, scored wrong",
            "lmms-eval": "its first-letter regular expression",
            "vlmevalkit": "its rules (can_infer); no judge model (what they leave scores Z)"}


def readings(protocols: Sequence[str], judge: str | None) -> dict[str, str]:
    """How each protocol (and each judged reading) read its answers in this run."""
    out = {p: READINGS[p] for p in protocols}
    if judge is not None:
        if REFERENCE in protocols:
            out[judged(REFERENCE)] = (f"analyze_answer's rules, then the paper's matching "
                                      f"prompt asked of {judge} for what they leave")
        if "vlmevalkit" in protocols:
            out[judged("vlmevalkit")] = (f"its rules, then build_prompt_blink asked of "
                                         f"{judge} for what they leave")
    return out


def summarize(records: Iterable[Record], protocols: Sequence[str],
              label_sets: Sequence[str], judge: str | None = None) -> dict[str, Any]:
    judged_keys = [judged(p) for p in JUDGED_PROTOCOLS if p in protocols] \
        if judge is not None else []
    keys = [k for p in protocols for k in (p, judged(p)) if k in protocols or k in judged_keys]
    tallies = {(p, s): Tally() for p in keys for s in label_sets}
    unparsed: dict[str, Counter[str]] = {p: Counter() for p in keys}
    asked: dict[str, Counter[str]] = {p: Counter() for p in judged_keys}
    changed: Counter[str] = Counter()
    differences = Differences(REFERENCE, protocols) \
        if REFERENCE in protocols and len(protocols) > 1 else None
    for record in records:
        protocol = str(record.metadata.get("prompt"))
        if protocol not in protocols:
            continue
        if differences is not None:
            differences.add(record)
        mine = [protocol] + ([judged(protocol)] if judged(protocol) in judged_keys else [])
        for key in mine:
            for label_set in label_sets:
                tallies[(key, label_set)].add(record, verdict(record, key, label_set))
            if not record.ok:
                continue
            if key in asked:
                asked[key].update(judge_outcome(key, record))
            why = unreadable(key, record)
            if why:
                unparsed[key][why] += 1
            before = record.scores.get(key, {}).get("correct")
            after = record.scores.get(score_key(key, "corrected"), {}).get("correct")
            changed[key] += before is not None and after is not None and before != after
    out: dict[str, Any] = {"protocols": {}, "readings": readings(protocols, judge)}
    for key in keys:
        block: dict[str, Any] = {s: tallies[(key, s)].block() for s in label_sets}
        block["unparsed"] = dict(unparsed[key])
        if key in asked:
            block["judge"] = {k: asked[key][k] for k in JUDGE_OUTCOMES}
        out["protocols"][key] = block
    out["corrections"] = effect_block(manifest(), out["protocols"], changed, label_sets,
                                     ("macro", "micro"))
    if differences is not None:
        differences.finish()
        out["differences"] = difference_summary(differences.summary(),
                                                out["protocols"]).model_dump()
    return out


def question_units(records: Iterable[Record], protocols: Sequence[str],
                   label_sets: Sequence[str]) -> Iterator[GapUnit]:
    """Each answer's part of its protocol's headline under each label set, drawn with its
    first image as the intervals draw it (`visioneval explain`): one stratum per task for a
    mean of task accuracies, one for a mean over questions. The judged readings are no
    protocol's headline and are left out."""
    for record in records:
        protocol = str(record.metadata.get("prompt"))
        if protocol not in protocols:
            continue
        stratum = "all" if protocol in MEAN_OVER_QUESTIONS else str(record.metadata["task"])
        shares = {(protocol, label_set): GapShare(stratum, correct, 1.0)
                  for label_set in LABELS if label_set in label_sets
                  if (correct := verdict(record, protocol, label_set)) is not None}
        if shares:
            yield GapUnit(cluster_of(record), shares)


JUDGE_OUTCOMES = ("asked", "read", "no_option", "random", "failed")


def judge_outcome(key: str, record: Record) -> list[str]:
    """What the judge did for one answer: nothing (the rules read it), or asked and then
    read an option, named none, left VLMEvalKit's random pick, or failed."""
    reading = record.parsed.get(f"{key} reading")
    if not isinstance(reading, dict):
        return []
    if "error" in reading:
        return ["asked", "failed"]
    if reading.get("how") == RANDOM:
        return ["asked", "random"]
    found = record.parsed.get(key)
    return ["asked", "read" if found and found != "Z" else "no_option"]


AGGREGATION = {
    "lmms-eval": ("lmms-eval's blink group is the unweighted mean of the 14 task accuracies "
                  "(blink.yaml; api/group.py weight_by_size False), as the paper's"),
    "vlmevalkit": ("VLMEvalKit's 'Overall' is the mean over every question (multiple_choice.py "
                   "report_acc), not the paper's unweighted mean over tasks"),
}


def difference_summary(summary: DifferenceSummary, protocols: dict[str, Any]
                       ) -> DifferenceSummary:
    """The per-question causes, with the aggregation said beside them: each harness's
    headline against the paper's macro mean, in points."""
    paper = protocols.get(REFERENCE, {}).get("original", {})
    for protocol in protocols:
        if protocol not in AGGREGATION:  # the paper, and the judged readings
            continue
        mine = protocols[protocol].get("original", {})
        key = "micro" if protocol == "vlmevalkit" else "macro"
        points = None
        if key in mine and "macro" in mine:
            points = 100 * (mine[key] - mine["macro"])
        summary.add_note(protocol, "aggregation", AGGREGATION[protocol] + (
            f": {points:+.2f} points on this run's answers" if points is not None else ""),
            points)
        if key in mine and "macro" in paper:
            summary.add_note(protocol, "reported number (all causes)",
                             f"{100 * mine[key]:.1f}% ({key}) against the paper protocol's "
                             f"{100 * paper['macro']:.1f}% (macro)",
                             100 * (mine[key] - paper["macro"]))
    return summary


def write_protocols_csv(records: Iterable[Record], protocols: Sequence[str],
                        directory: Path) -> Path:
    return write_run_csv(records, REFERENCE, protocols, directory / "protocols.csv")
