"""metrics.json for POPE, from the records alone, streamed once.

Per protocol and label set (`original`: the Hub's labels; `corrected`: RePOPE's, with its
ambiguous questions left out), each setting's counts and metrics (`counts.Counts.block`),
and what each harness reports besides:
- paper: per setting, as the paper's tables do; `mean_f1`, the mean of the three settings'
  F1 (LLaVA-1.5's one POPE number, not the paper's; only with the three settings); per
  source (the image's dataset) when the data holds more than one.
- lmms-eval: per setting (its tasks pope_random, pope_pop, pope_adv) and `pooled`, its task
  `pope`, which scores the settings' questions together.
- vlmevalkit: per setting and `overall`, `POPE_rating`'s "Overall" row (every setting's
  questions together; its headline is that F1).
`differences`: why the protocols score the same items differently (`harness.differences`),
on the run's first label set; `labels`: the corrections applied and those that did not fit.
Failed requests are counted in `n_errors` and scored nowhere.
"""

# Imports inside functions: numpy loads when an interval is computed, as in stats/bootstrap.

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

from visioneval.benchmarks.pope import protocols
from visioneval.benchmarks.pope.counts import Counts, intervals
from visioneval.benchmarks.pope.labels import manifest
from visioneval.benchmarks.pope.scoring import relabelled
from visioneval.benchmarks.pope.spec import (
    AMBIGUOUS,
    FAMILY,
    JUDGE_ERROR,
    JUDGED,
    LMMS,
    NO,
    PAPER,
    SETTINGS,
    VLMEVALKIT,
    YES,
)
from visioneval.core.gap import LABELS, GapShare, GapUnit, Key
from visioneval.core.records import Record
from visioneval.harness.differences import Differences, DifferenceSummary
from visioneval.stats.bootstrap import Outcomes

PROBLEMS_KEPT = 5
S = TypeVar("S", bound=str)  # a label set's name, as the caller types it


def source_of(image: str) -> str:
    """The dataset an image comes from, by its file name (the Hub copy: COCO val2014)."""
    if image.startswith("COCO_val2014_"):
        return "COCO val2014"
    head = image.split("_", 1)[0]
    return head if head and head != image else "other"


def answer(record: Record, label: str, protocol: str) -> tuple[bool, str | None, bool] | None:
    """How a protocol scores the record against the label: (right, the yes/no its counts
    take, unread); None when the request failed or its judge did (an error, scored
    nowhere)."""
    if not record.ok or protocol not in record.scores:
        return None
    reading = str(record.parsed.get(protocol, ""))
    said = protocols.said(protocol, reading)
    unparsed = said is None if protocol == LMMS else (
        protocol == VLMEVALKIT and reading == "Unknown")
    return protocols.correct(protocol, reading, label), said, unparsed


def scorings(record: Record, label_sets: Sequence[S]) -> Iterator[tuple[S, str, Record]]:
    """(label set, its label, the record scored against it) for each label set that keeps
    the question (RePOPE's ambiguous ones are left out of `corrected`)."""
    target = record.target if isinstance(record.target, dict) else {}
    original = str(target.get("answer", ""))
    fixed = str(target.get("corrected", original))
    for label_set in label_sets:
        label = original if label_set == "original" else fixed
        if label != AMBIGUOUS:
            yield label_set, label, record if label == original else relabelled(record, label)


def f1_share(stratum: str, said: str | None, label: str) -> GapShare:
    """An answer's part of F1 = 2TP / (2TP + FP + FN): a true positive adds 2 and 2, a false
    positive or false negative 0 and 1, a true negative or an answer the counts do not take
    nothing."""
    if said == YES:
        return GapShare(stratum, 2.0, 2.0) if label == YES else GapShare(stratum, 0.0, 1.0)
    return GapShare(stratum, 0.0, float(said == NO and label == YES))


def image_units(records: Iterable[Record], protocols_: Sequence[str],
                settings: Sequence[str], label_sets: Sequence[str]) -> Iterator[GapUnit]:
    """Each answer's part of F1 under every protocol and label set, its image the cluster,
    as the intervals draw them (`counts.intervals`), for `visioneval explain`: per setting
    (the paper's mean F1 of the three settings) or pooled (lmms-eval's `pope` task,
    VLMEvalKit's Overall). A failed request is left out of its protocol's F1, as the counts
    leave it out, never scored wrong."""
    wanted = [s for s in LABELS if s in label_sets]
    for record in records:
        setting = record.metadata.get("setting")
        if setting not in settings:
            continue
        readers = [p for p in protocols_ if FAMILY[p] == record.metadata.get("family", PAPER)]
        shares: dict[Key, GapShare] = {}
        for label_set, label, scored in scorings(record, wanted):
            for protocol in readers:
                read = answer(scored, label, protocol)
                if read is not None:
                    stratum = str(setting) if protocol == PAPER else "all"
                    shares[(protocol, label_set)] = f1_share(stratum, read[1], label)
        image = record.metadata.get("image")
        if shares:
            yield GapUnit(f"image {image}" if image is not None else record.id, shares)


class LabelTally:
    """Every protocol's counts under one label set."""

    def __init__(self, protocols_: Sequence[str], settings: Sequence[str]):
        self.settings = list(settings)
        self.by = {p: {s: Counts() for s in settings} for p in protocols_}
        self.sources: dict[str, dict[str, Counts]] = {}
        self.mean_rows = Outcomes(3 * len(SETTINGS))

    def add(self, record: Record, label: str, protocol: str) -> None:
        setting = record.metadata["setting"]
        counts = self.by[protocol].get(setting)
        if counts is None:
            return
        read = answer(record, label, protocol)
        if read is None:
            counts.error()
            return
        image = record.metadata.get("image")
        right, said, unparsed = read
        counts.add(record.id, image, right, said, label, unparsed)
        if protocol != PAPER:
            return
        source = source_of(str(image or ""))
        self.sources.setdefault(source, {}).setdefault(setting, Counts()).add(
            record.id, image, right, said, label)
        row = [0.0] * (3 * len(SETTINGS))
        k = 3 * SETTINGS.index(setting)
        row[k:k + 3] = [float(said == "yes" and label == "yes"),
                        float(said == "yes" and label == "no"),
                        float(said == "no" and label == "yes")]
        self.mean_rows.add(record.id, row, image)

    def result(self, protocol: str) -> dict[str, Any]:
        settings = self.by[protocol]
        out: dict[str, Any] = {"settings": {s: c.block(protocol) for s, c in settings.items()}}
        if protocol in (LMMS, VLMEVALKIT):
            pooled = Counts()
            for counts in settings.values():
                pooled.extend(counts)
            out["pooled" if protocol == LMMS else "overall"] = pooled.block(protocol)
        if protocol == PAPER:
            out["mean_f1"] = self.mean_f1(out["settings"])
            if len(self.sources) > 1:
                out["sources"] = {src: {s: c.block(protocol) for s, c in by.items()}
                                  for src, by in sorted(self.sources.items())}
        return out

    def mean_f1(self, blocks: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """LLaVA-1.5's summary: the mean of the three settings' F1, clustered by image."""
        if [s for s in SETTINGS if s in blocks] != list(SETTINGS):
            return {"unavailable": "needs the three settings (random, popular, adversarial)"}
        missing = [s for s in SETTINGS if "f1" not in blocks[s]]
        if missing:
            return {"unavailable": f"F1 is undefined for {', '.join(missing)}"}
        block: dict[str, Any] = {"f1": sum(blocks[s]["f1"] for s in SETTINGS) / len(SETTINGS),
                                 "n": sum(blocks[s]["n"] for s in SETTINGS)}
        intervals(block, self.mean_rows, _mean_f1_statistic, ("f1",))
        return block


def _mean_f1_statistic(sums: Any, n: int) -> Any:
    import numpy as np

    found = []
    for k in range(len(SETTINGS)):
        tp, fp, fn = sums[:, 3 * k], sums[:, 3 * k + 1], sums[:, 3 * k + 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            f1 = np.where((tp > 0), 2 * tp / (2 * tp + fp + fn), np.nan)
        found.append(f1)
    return np.mean(np.stack(found, axis=1), axis=1, keepdims=True)


def summarize(records: Iterable[Record], protocols_: Sequence[str], settings: Sequence[str],
              label_sets: Sequence[str]) -> dict[str, Any]:
    """metrics.json from the records (the newest per sample), in one pass."""
    tallies = {ls: LabelTally(protocols_, settings) for ls in label_sets}
    differences = Differences(PAPER, protocols_) if PAPER in protocols_ else None
    first = label_sets[0]
    relabelled_n = left_out = 0
    judge = Counter[str]()
    problems: list[str] = []
    n_problems = 0
    for record in records:
        family = record.metadata.get("family", PAPER)
        readers = [p for p in protocols_ if FAMILY[p] == family]
        target = record.target if isinstance(record.target, dict) else {}
        original = str(target.get("answer", ""))
        fixed = str(target.get("corrected", original))
        problem = record.metadata.get("label_problem")
        if family == PAPER or PAPER not in protocols_:
            relabelled_n += fixed not in (original, AMBIGUOUS)
            left_out += fixed == AMBIGUOUS
            if isinstance(record.parsed.get(JUDGED), str):
                judge[record.parsed[JUDGED]] += 1
            judge["failed"] += JUDGE_ERROR in record.parsed
            if isinstance(problem, str):
                n_problems += 1
                if len(problems) < PROBLEMS_KEPT:
                    problems.append(problem)
        for label_set, label, scored in scorings(record, label_sets):
            tally = tallies[label_set]
            for protocol in readers:
                tally.add(scored, label, protocol)
            if differences is not None and label_set == first:
                differences.add(scored)
    out: dict[str, Any] = {p: {ls: t.result(p) for ls, t in tallies.items()}
                           for p in protocols_}
    summary = _summary(differences, tallies[first], protocols_, judge) if differences \
        else None
    out["differences"] = summary.model_dump() if summary else None
    made = manifest()
    out["labels"] = {"sets": list(label_sets), "manifest": made.version,
                     "relabelled": relabelled_n, "left_out": left_out,
                     "problems": problems, "n_problems": n_problems}
    return out


def _summary(differences: Differences, tally: LabelTally, protocols_: Sequence[str],
             judge: Counter[str]) -> DifferenceSummary:
    differences.finish()
    summary = differences.summary()
    if LMMS in protocols_:
        pooled = sum(c.unparsed for c in tally.by[LMMS].values())
        summary.add_note(LMMS, "aggregation", "its task `pope` scores the three settings' "
                         "questions together; the paper reports each setting apart "
                         "(pope_random, pope_pop and pope_adv are lmms-eval's per setting)")
        summary.add_note(LMMS, "precision and recall", f"{pooled} answers that are not "
                         "exactly \"yes\" or \"no\" are left out of precision and recall "
                         "(and scored wrong in accuracy); the paper reads every answer")
        summary.add_note(LMMS, "yes ratio", "pope_yes_ratio counts the \"yes\" labels, not "
                         "the answers: it is 50.0 on every POPE setting, whatever the model")
    if VLMEVALKIT in protocols_:
        unknown = sum(c.unparsed for c in tally.by[VLMEVALKIT].values())
        summary.add_note(VLMEVALKIT, "aggregation", "its main number (Overall) is the F1 of the "
                         "settings' questions together; the paper reports each setting apart")
        summary.add_note(VLMEVALKIT, "Unknown answers", f"{unknown} answers read Unknown "
                         "count as \"no\" in precision, recall and F1 and as wrong in "
                         "accuracy; the paper's rule reads each as yes or no")
        if sum(judge.values()):
            summary.add_note(VLMEVALKIT, "judge", f"the judge read {sum(judge.values())} "
                             f"Unknown answers: {judge['Yes']} yes, {judge['No']} no, "
                             f"{judge['Unknown']} still Unknown, {judge['failed']} failed "
                             "(left out of VLMEvalKit's metrics); counted in extraction")
        else:
            summary.add_note(VLMEVALKIT, "judge", "with a working OpenAI key VLMEvalKit asks "
                             "gpt-4o-mini to read the Unknown answers; not asked here "
                             "(--judge-backend, --judge-model)")
    return summary
