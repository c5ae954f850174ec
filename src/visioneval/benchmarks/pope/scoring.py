"""One answer scored under every protocol that reads its prompt, against one label set.

An answer to the question as it is (the paper's prompt, which VLMEvalKit also sends) is read
by the paper's rule and VLMEvalKit's; an answer to lmms-eval's prompt (the question and its
suffix) by lmms-eval's. The paper's score block also carries what the other protocols'
rules make of the paper's answer (`harness.differences.reference_block`): lmms-eval's
extraction of it (its own answer is to another prompt), and nothing for VLMEvalKit, which
reads the same answer (its difference is the extraction alone)."""

from __future__ import annotations

from typing import Any

from visioneval import excerpts
from visioneval.benchmarks.pope import protocols
from visioneval.benchmarks.pope.spec import JUDGED, LMMS, PAPER, VLMEVALKIT
from visioneval.core.records import Record
from visioneval.harness.differences import Counterfactual, reference_block

Scored = tuple[dict[str, Any], dict[str, dict[str, float]]]


def score(family: str, text: str, label: str) -> Scored:
    """(parsed, scores) of one answer: per protocol its reading and whether it is right."""
    if family == LMMS:
        reading = protocols.lmms_reading(text)
        right = protocols.correct(LMMS, reading, label)
        # The record keeps the reading, capped (the whole is in response.text).
        return {LMMS: excerpts.excerpt(reading)}, {LMMS: {"correct": float(right)}}
    paper = protocols.paper_reading(text)
    vlm = protocols.vlmevalkit_reading(text)
    lmms = protocols.correct(LMMS, protocols.lmms_reading(text), label)
    others = {LMMS: Counterfactual(extraction=float(lmms)), VLMEVALKIT: Counterfactual()}
    return ({PAPER: paper, VLMEVALKIT: vlm},
            {PAPER: reference_block(float(protocols.correct(PAPER, paper, label)), others),
             VLMEVALKIT: {"correct": float(protocols.correct(VLMEVALKIT, vlm, label))}})


def relabelled(record: Record, label: str) -> Record:
    """The record scored again against another label (a corrected one), from its answer;
    VLMEvalKit's judge's reading, where a judge read it, is kept."""
    if not record.ok:
        return record
    parsed, scores = score(record.metadata.get("family", PAPER), record.response.text or "",
                           label)
    kept = record.parsed
    parsed = {p: v for p, v in parsed.items() if p in kept} | {
        k: v for k, v in kept.items() if k.startswith(f"{VLMEVALKIT}_")}
    scores = {p: v for p, v in scores.items() if p in record.scores}
    if isinstance(kept.get(JUDGED), str):
        parsed[VLMEVALKIT] = kept[JUDGED]
        scores[VLMEVALKIT] = {"correct": float(protocols.correct(VLMEVALKIT, kept[JUDGED],
                                                                 label))}
    return record.model_copy(update={"parsed": parsed, "scores": scores})
