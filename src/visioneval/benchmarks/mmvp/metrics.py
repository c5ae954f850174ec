"""metrics.json for MMVP, from the records alone, in one pass.

Per protocol and label set (`original`: each protocol's own labels; `corrected`): per-question
accuracy (its 95% interval a cluster bootstrap that draws pairs: the two questions of a pair
share a question and a CLIP-blind image pair), pair accuracy (both questions of a pair right;
the paper's metric; its interval a bootstrap over pairs) and both per visual pattern. Per
protocol: the answers it could not read. Then what the corrections change, and why the
protocols differ (harness.differences). A failed request is counted in n_errors, never
scored; its pair is incomplete and left out of pair accuracy (so is a pair with one question
outside the run). A number that cannot be computed is absent with the reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from visioneval.benchmarks.mmvp.labels import manifest
from visioneval.benchmarks.mmvp.patterns import tags
from visioneval.benchmarks.mmvp.spec import REFERENCE, UNDETERMINED, UNPARSED, score_key
from visioneval.core.gap import LABELS as LABEL_SETS
from visioneval.core.gap import GapShare, GapUnit, Key
from visioneval.core.records import Record
from visioneval.harness.corrections import effect_block
from visioneval.harness.differences import Differences, DifferenceSummary, write_run_csv
from visioneval.stats.bootstrap import Outcomes, attach, mean_statistic, summaries

CLUSTER = "pair"


class Tally:
    """One protocol under one label set, fed record by record (memory: a few numbers per
    question of the run)."""

    def __init__(self) -> None:
        self.n = 0
        self.n_errors = 0
        self.correct = 0.0
        self.questions = Outcomes(1)
        self.pairs: dict[int, dict[int, tuple[float, str | None]]] = {}
        self.failed_pairs: set[int] = set()

    def add(self, record: Record, correct: float | None) -> None:
        meta = record.metadata
        pair, index = int(meta["pair"]), int(meta["index"])
        if correct is None:
            self.n_errors += 1
            self.failed_pairs.add(pair)
            return
        self.n += 1
        self.correct += correct
        self.questions.add(record.id, (correct,), f"{CLUSTER} {pair}")
        self.pairs.setdefault(pair, {})[index] = (correct, meta.get("pattern"))

    def complete(self) -> dict[int, tuple[float, str | None]]:
        """Each complete pair: (both right, its pattern when both questions share one)."""
        out = {}
        for pair, found in self.pairs.items():
            if len(found) == 2 and pair not in self.failed_pairs:
                (c1, p1), (c2, p2) = found.values()
                out[pair] = (float(c1 == 1.0 and c2 == 1.0), p1 if p1 == p2 else None)
        return out

    def block(self) -> dict[str, Any]:
        block: dict[str, Any] = {"n": self.n, "n_errors": self.n_errors}
        if not self.n:
            block["unavailable"] = f"no scored answer ({self.n_errors} failed requests)"
            return block
        block["accuracy"] = self.correct / self.n
        clusters = self.questions.clusters(CLUSTER)
        attach(block, summaries(self.questions.matrix(), mean_statistic, ("accuracy",),
                                clusters))
        complete = self.complete()
        block["n_pairs"] = len(complete)
        block["incomplete_pairs"] = len(set(self.pairs) | self.failed_pairs) - len(complete)
        if complete:
            block["pair_accuracy"] = sum(v for v, _ in complete.values()) / len(complete)
            rows = Outcomes(1)
            for pair, (both, _) in complete.items():
                rows.add(f"{CLUSTER} {pair}", (both,))
            attach(block, summaries(rows.matrix(), mean_statistic, ("pair_accuracy",)))
        else:
            block["pair_accuracy_unavailable"] = "no pair has both questions scored"
        block["per_pattern"] = self._per_pattern(complete)
        return block

    def _per_pattern(self, complete: dict[int, tuple[float, str | None]]
                     ) -> dict[str, dict[str, Any]]:
        questions: dict[str, list[float]] = {}
        for found in self.pairs.values():
            for correct, pattern in found.values():
                if pattern:
                    questions.setdefault(pattern, []).append(correct)
        pairs: dict[str, list[float]] = {}
        for both, pattern in complete.values():
            if pattern:
                pairs.setdefault(pattern, []).append(both)
        out = {}
        for name in tags().patterns:
            q, p = questions.get(name, []), pairs.get(name, [])
            if not q:
                continue
            cell: dict[str, Any] = {"n": len(q), "accuracy": sum(q) / len(q),
                                    "n_pairs": len(p)}
            if p:
                cell["pair_accuracy"] = sum(p) / len(p)
            out[name] = cell
        return out


def unreadable(protocol: str, record: Record) -> str | None:
    """Why `protocol` could not read this answer (None: it read a letter)."""
    found = record.parsed.get(protocol)
    if protocol == REFERENCE:
        grader = record.parsed.get("paper_grader")
        if isinstance(grader, dict):
            return GRADER_UNSURE if UNDETERMINED in grader.values() else None
        return None if found else str(record.parsed.get("paper_reading") or UNPARSED)
    if protocol == "lmms-eval":
        return None if found else "no letter found (scored wrong)"
    judged = record.parsed.get("vlmevalkit_judge")
    if isinstance(judged, dict) and judged.get("how") != "judge":
        return f"{judged.get('how')}: {found}"
    if found == "Z":
        return "Z: a refusal, or the judge matched no option"
    return None if found else "left to VLMEvalKit's judge model: scored Z (wrong) without one"


GRADER_UNSURE = "the grader's reply was neither yes nor no (not correct, as the paper counts it)"


def readings(judge: str | None) -> dict[str, str]:
    """How each protocol read its answers in this run."""
    if judge is None:
        return {"paper": "visioneval's rule (the paper graded with GPT-4-0314)",
                "lmms-eval": "its regular expressions",
                "vlmevalkit": "its rules; no judge model (what they leave scores Z)"}
    return {"paper": f"the paper's grader prompt, asked of {judge}",
            "lmms-eval": "its regular expressions",
            "vlmevalkit": f"its rules, then its matching prompt asked of {judge}"}


def summarize(records: Iterable[Record], protocols: Sequence[str],
              label_sets: Sequence[str], judge: str | None = None) -> dict[str, Any]:
    tallies = {(p, s): Tally() for p in protocols for s in label_sets}
    unparsed: dict[str, Counter[str]] = {p: Counter() for p in protocols}
    changed: Counter[str] = Counter()
    notes: dict[str, None] = {}
    differences = Differences(REFERENCE, protocols) \
        if REFERENCE in protocols and len(protocols) > 1 else None
    for record in records:
        protocol = record.metadata.get("prompt")
        if protocol not in unparsed:
            continue
        for line in record.metadata.get("label_notes") or ():
            notes[str(line)] = None
        if differences is not None:
            differences.add(record)
        for label_set in label_sets:
            verdict = record.scores.get(score_key(protocol, label_set), {}).get("correct") \
                if record.ok else None
            tallies[(protocol, label_set)].add(record, verdict)
        if record.ok:
            why = unreadable(protocol, record)
            if why:
                unparsed[protocol][why] += 1
            before = record.scores.get(protocol, {}).get("correct")
            after = record.scores.get(score_key(protocol, "corrected"), {}).get("correct")
            changed[protocol] += before is not None and after is not None and before != after
    out: dict[str, Any] = {"protocols": {}, "readings": {
        p: r for p, r in readings(judge).items() if p in protocols}}
    for protocol in protocols:
        block: dict[str, Any] = {s: tallies[(protocol, s)].block() for s in label_sets}
        block["unparsed"] = dict(unparsed[protocol])
        out["protocols"][protocol] = block
    out["corrections"] = effect_block(manifest(), out["protocols"], changed, label_sets,
                                     ("accuracy", "pair_accuracy"))
    if differences is not None:
        differences.finish()
        out["differences"] = difference_summary(differences.summary(),
                                                out["protocols"]).model_dump()
    if notes:
        out["label_notes"] = list(notes)
    out["patterns_source"] = tags().source
    return out



def pair_units(records: Iterable[Record], protocols: Sequence[str],
               label_sets: Sequence[str]) -> Iterator[GapUnit]:
    """Each complete pair's part of pair accuracy under every protocol and label set, the
    pair its own cluster, as the pair-accuracy interval draws them (`visioneval explain`)."""
    tallies: dict[Key, Tally] = {(p, s): Tally() for p in protocols for s in LABEL_SETS
                                 if s in label_sets}
    for record in records:
        protocol = str(record.metadata.get("prompt"))
        if protocol not in protocols:
            continue
        for p, label_set in tallies:
            if p != protocol:
                continue
            verdict = record.scores.get(score_key(protocol, label_set), {}).get("correct") \
                if record.ok else None
            tallies[(protocol, label_set)].add(record, verdict)
    complete = {key: tally.complete() for key, tally in tallies.items()}
    for pair in sorted(set().union(*complete.values())):
        yield GapUnit(f"{CLUSTER} {pair}", {
            key: GapShare("all", found[pair][0], 1.0) for key, found in complete.items()
            if pair in found})


AGGREGATION = {
    "lmms-eval": ("lmms-eval reports mmvp_accuracy (per question) beside mmvp_pair_accuracy "
                  "(utils.py lines 187-256); the paper reports pair accuracy only"),
    "vlmevalkit": ("VLMEvalKit's 'Average' is per-question accuracy and 'Overall' pair "
                   "accuracy (multiple_choice.py lines 613-622); the paper reports pair "
                   "accuracy only"),
}
LABELS = {
    "vlmevalkit": ("VLMEvalKit's MMVP.tsv is taken to hold the published labels: its "
                   "content is not published beside its md5 (image_mcq.py line 195)"),
}


def difference_summary(summary: DifferenceSummary, protocols: dict[str, Any]
                       ) -> DifferenceSummary:
    """The per-question causes, with what is not per question said beside them: each
    harness's aggregation, its labels, and its pair accuracy against the paper's."""
    paper = protocols.get(REFERENCE, {}).get("original", {})
    for protocol in protocols:
        if protocol == REFERENCE:
            continue
        summary.add_note(protocol, "aggregation", AGGREGATION[protocol])
        if protocol in LABELS:
            summary.add_note(protocol, "label copy", LABELS[protocol])
        mine = protocols[protocol].get("original", {})
        if "pair_accuracy" in mine and "pair_accuracy" in paper:
            points = 100 * (mine["pair_accuracy"] - paper["pair_accuracy"])
            summary.add_note(protocol, "pair accuracy (all causes)",
                             f"{100 * mine['pair_accuracy']:.1f}% against the paper "
                             f"protocol's {100 * paper['pair_accuracy']:.1f}%", points)
    return summary


def write_protocols_csv(records: Iterable[Record], protocols: Sequence[str],
                        directory: Path) -> Path:
    """protocols.csv: every question whose verdict a cause moved, streamed from the
    journal."""
    return write_run_csv(records, REFERENCE, protocols, directory / "protocols.csv")
