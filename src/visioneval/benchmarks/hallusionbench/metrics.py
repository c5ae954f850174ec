"""metrics.json for HallusionBench, from the records alone, streamed once.

`{"protocols": {P: block}, "corrected": {P: block} | null, "labels": {...},
"differences": {...} | null}`, all fractions. A protocol's block: the questions it scored,
its failed requests, the questions it leaves out (the harnesses ask none without a figure),
the answers its reading could not call yes or no; then aAcc, fAcc, qAcc and the easy and
hard question-pair accuracies overall, per category (VD, VS) and per subcategory; the
figures' consistency; the paper's yes/no bias (paper only) and VLMEvalKit's mean of aAcc,
fAcc and qAcc (vlmevalkit only). Overall and per category every metric has a 95% interval:
a bootstrap that resamples sets, each with all its figures and question groups
(docs/decisions.md says why sets). A metric with nothing to count is absent with a reason."""

# Imports inside functions: numpy loads when intervals are computed.

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from visioneval.benchmarks.hallusionbench import scoring
from visioneval.benchmarks.hallusionbench.items import Item
from visioneval.benchmarks.hallusionbench.spec import CATEGORIES, IMAGE_ONLY, REFERENCE
from visioneval.benchmarks.hallusionbench.tally import METRICS, SetTally, YesNoTally
from visioneval.core.gap import GapShare, GapUnit, Key, Labels
from visioneval.core.records import Record
from visioneval.harness.differences import Differences
from visioneval.stats.bootstrap import Outcomes, Statistic, attach, summaries

UNCLEAR_WORDS = ("Unknown", "unclear")
THREE = ("aAcc", "fAcc", "qAcc")


def ratio(numerator: int, denominator: int) -> Statistic:
    """One column's sum over another's, on each resample."""
    def statistic(sums: Any, n: int) -> Any:
        return sums[:, [numerator]] / sums[:, [denominator]]
    return statistic


def mean_of_three(sums: Any, n: int) -> Any:
    """VLMEvalKit's single number: (aAcc + fAcc + qAcc) / 3 on each resample."""
    return (sums[:, [1]] / sums[:, [0]] + sums[:, [3]] / sums[:, [2]]
            + sums[:, [5]] / sums[:, [4]]) / 3


def interval(rows: list[tuple[str, tuple[float, ...]]], statistic: Statistic, name: str,
             block: dict[str, Any]) -> None:
    """Attach `name`'s bootstrap interval over the sets in `rows` (each one resampled as a
    whole)."""
    import numpy as np

    from visioneval.stats.bootstrap import Clusters

    outcomes = Outcomes(len(rows[0][1]))
    for key, row in rows:
        outcomes.add(key, row)
    count = len(outcomes)
    clusters = Clusters("set", np.arange(count, dtype=np.intp), count)
    attach(block, summaries(outcomes.matrix(), statistic, (name,), clusters))


def scores(sets: dict[str, SetTally], with_intervals: bool) -> dict[str, Any]:
    """The paper's five accuracies over some sets, each with its count."""
    rows = [(key, tally.row()) for key, tally in sorted(sets.items())]
    sums = [sum(row[i] for _, row in rows) for i in range(10)]
    block: dict[str, Any] = {"n_sets": len(rows),
                             "incomplete": sum(t.incomplete() for t in sets.values())}
    for name, num, den in METRICS:
        block[f"n_{name}"] = int(sums[den])
        if not sums[den]:
            block[f"{name}_unavailable"] = f"no complete {_WHAT[name]} to count"
            continue
        block[name] = sums[num] / sums[den]
        if with_intervals:
            interval([r for r in rows if r[1][den] > 0], ratio(num, den), name, block)
    return block


_WHAT = {"aAcc": "question", "fAcc": "figure", "qAcc": "question group",
         "easy": "easy question pair", "hard": "hard question pair"}


class ProtocolTally:
    """One protocol's verdicts under one label set, per set."""

    def __init__(self, protocol: str, key: str, label_set: str):
        self.protocol, self.key, self.label_set = protocol, key, label_set
        self.sets: dict[str, SetTally] = {}
        self.n = self.n_errors = self.excluded = self.unclear = 0
        self.yes_no = YesNoTally()
        self.judged = False

    def add(self, record: Record, item: Item) -> float | None:
        """Count one question; its verdict when aAcc counts it (None: left out, or its
        request failed)."""
        if not scoring.takes(self.protocol, item):
            self.excluded += 1
            return None
        tally = self.sets.setdefault(item.set_key, SetTally())
        if not record.ok:
            self.n_errors += 1
            tally.add(item, None)
            return None
        score = record.scores.get(self.key) or record.scores.get(self.protocol)
        if score is None:  # an older record, or one scored without this protocol
            self.excluded += 1
            return None
        said = record.parsed.get(self.key, record.parsed.get(self.protocol))
        self.n += 1
        self.unclear += said in UNCLEAR_WORDS
        self.judged |= said in scoring.GRADER_WORDS.values()
        correct = float(score["correct"])
        tally.add(item, correct)
        self.yes_no.add(item, correct, str(record.parsed.get("yes_no", "Unknown")))
        return correct

    def block(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "protocol": self.protocol, "label_set": self.label_set,
            "reading": "judge" if self.judged else "rule", "n": self.n,
            "n_errors": self.n_errors, "excluded": self.excluded, "unclear": self.unclear}
        if not self.n:
            out["unavailable"] = f"no scored answers ({self.n_errors} failed requests)"
        out["overall"] = scores(self.sets, with_intervals=True)
        out["by_category"] = {c: scores(self._of(c + "_"), True) for c in CATEGORIES
                              if self._of(c + "_")}
        l2s = sorted({k.rsplit("_", 1)[0] for k in self.sets})
        out["by_subcategory"] = {l2: scores(self._of(l2 + "_"), False) for l2 in l2s}
        out["figures"] = self._figures()
        if self.protocol == REFERENCE:
            out["yes_no"] = self._yes_no()
        if self.protocol == "vlmevalkit":
            out["mean_of_three"] = self._mean_of_three(out["overall"])
        return out

    def _of(self, prefix: str) -> dict[str, SetTally]:
        return {k: t for k, t in self.sets.items() if k.startswith(prefix)}

    def _figures(self) -> dict[str, Any]:
        found = [t.consistency() for t in self.sets.values()]
        n = sum(f[0] + f[1] + f[2] for f in found)
        if not n:
            return {"n": 0, "unavailable": "no complete figure"}
        return {"n": n, "all_right": sum(f[0] for f in found) / n,
                "all_wrong": sum(f[1] for f in found) / n,
                "mixed": sum(f[2] for f in found) / n,
                "mean_accuracy": sum(f[3] for f in found) / n}

    def _yes_no(self) -> dict[str, Any]:
        t = self.yes_no
        if not t.n:
            return {"n": 0, "unavailable": "no scored answers"}
        out: dict[str, Any] = {
            "n": t.n, "truth_yes": t.truth_yes / t.n, "inferred_yes": t.inferred_yes / t.n,
            "difference": (t.inferred_yes - t.truth_yes) / t.n,
            "said_yes": t.said["Yes"] / t.n, "said_no": t.said["No"] / t.n,
            "said_neither": t.said["Unknown"] / t.n}
        if t.wrong:
            out["false_yes_share"] = t.wrong_truth_no / t.wrong
        else:
            out["false_yes_share_unavailable"] = "no wrong answers"
        return out

    def _mean_of_three(self, overall: dict[str, Any]) -> dict[str, Any]:
        if any(name not in overall for name in THREE):
            return {"unavailable": "aAcc, fAcc or qAcc is missing"}
        block: dict[str, Any] = {"value": sum(overall[n] for n in THREE) / 3}
        rows = [(k, t.row()) for k, t in sorted(self.sets.items())]
        if all(row[0] and row[2] and row[4] for _, row in rows):
            interval(rows, mean_of_three, "value", block)
        else:
            block["value_ci95_unavailable"] = "a set without a complete figure or group"
        return block


def tallies(protocols: Sequence[str], label_sets: Sequence[str]
            ) -> tuple[list[ProtocolTally], list[ProtocolTally]]:
    """The tallies behind metrics.json's `protocols` blocks (each protocol's own verdicts)
    and, with both label sets, its `corrected` blocks."""
    first = [ProtocolTally(p, p, label_sets[0]) for p in protocols]
    second = [ProtocolTally(p, p + scoring.CORRECTED, label_sets[1])
              for p in protocols] if len(label_sets) > 1 else []
    return first, second


def question_units(records: Iterable[Record], protocols: Sequence[str],
                   label_sets: Sequence[str]) -> Iterator[GapUnit]:
    """Each question's part of aAcc under every protocol and label set, drawn with its set
    as the aAcc intervals draw them (`visioneval explain`). The verdicts are the tallies'
    own: a question a protocol leaves out, or whose request failed, adds nothing to it."""
    first, second = tallies(protocols, label_sets)
    named: Labels = "corrected" if label_sets[0] == "corrected" else "original"
    keyed: list[tuple[Key, ProtocolTally]] = [((t.protocol, named), t) for t in first]
    keyed += [((t.protocol, "corrected"), t) for t in second]
    for record in records:
        item = Item.from_metadata(record.metadata)
        shares = {}
        for key, tally in keyed:
            correct = tally.add(record, item)
            if correct is not None:
                shares[key] = GapShare("all", correct, 1.0)
        if shares:
            yield GapUnit(f"set {item.set_key}", shares)


def summarize(records: Iterable[Record], protocols: Sequence[str], label_sets: Sequence[str],
              labels_note: dict[str, Any]) -> dict[str, Any]:
    """metrics.json from the records (the newest per sample), in one pass."""
    first, second = tallies(protocols, label_sets)
    differences = Differences(REFERENCE, protocols) \
        if REFERENCE in protocols and len(protocols) > 1 else None
    corrected_seen = 0
    for record in records:
        item = Item.from_metadata(record.metadata)
        for tally in (*first, *second):
            tally.add(record, item)
        corrected_seen += any(k.endswith(scoring.CORRECTED) for k in record.scores)
        if differences is not None:
            differences.add(record)
    out: dict[str, Any] = {"protocols": {t.protocol: t.block() for t in first},
                           "corrected": None,
                           "labels": labels_note | {"sets": list(label_sets),
                                                    "items_corrected": corrected_seen}}
    if second and corrected_seen:
        out["corrected"] = {t.protocol: t.block() for t in second}
    elif second:
        out["labels"]["corrected_note"] = ("no item of this run has a known label error: the "
                                           "corrected labels are the published ones")
    out["differences"] = None
    if differences is not None:
        differences.finish()
        summary = differences.summary()
        notes(summary, out["protocols"])
        out["differences"] = summary.model_dump()
    return out


def notes(summary: Any, blocks: dict[str, Any]) -> None:
    """What is not per item: how the harnesses aggregate (beside the item set)."""
    paper = blocks.get(REFERENCE, {}).get("overall", {})
    for protocol in IMAGE_ONLY:
        mine = blocks.get(protocol, {}).get("overall", {})
        if "qAcc" in mine and "qAcc" in paper and blocks[protocol]["excluded"]:
            summary.add_note(protocol, "aggregation",
                             "qAcc without the questions asked with no figure: a VS question "
                             f"group loses its no-figure member ({100 * mine['qAcc']:.1f} "
                             f"against the paper's {100 * paper['qAcc']:.1f})",
                             100 * (mine["qAcc"] - paper["qAcc"]))
    vlm = blocks.get("vlmevalkit", {})
    mean = vlm.get("mean_of_three", {}).get("value")
    if mean is not None:
        summary.add_note("vlmevalkit", "aggregation",
                         "its leaderboard's one number is the mean of aAcc, fAcc and qAcc "
                         f"({100 * mean:.1f}), VLMEvalKit's own; the paper reports the three "
                         "apart (points: the mean minus its aAcc)",
                         100 * (mean - vlm["overall"]["aAcc"]))
    if vlm and blocks.get(REFERENCE, {}).get("reading") == "judge":
        summary.add_note("vlmevalkit", "label set",
                         "VLMEvalKit compares with the Yes/No label, the paper's grader with "
                         "the detailed answer: with a judge model that difference is counted "
                         "under extraction")
