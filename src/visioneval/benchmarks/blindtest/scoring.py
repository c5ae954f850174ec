"""One answer scored under the protocol whose prompt it answers, against one label.

Each protocol sends its own prompt (the paper the Hub's prompt, lmms-eval the prompt and its
suffix, VLMEvalKit "Question: <prompt>\\n"), so each answer is read by one protocol. The
paper's score block also carries what lmms-eval's and VLMEvalKit's extractions make of the
paper's answer (`harness.differences.reference_block`): the item's move from the paper to a
harness splits into extraction (same answer, other rule) and prompt (the harness's own
answer)."""

from __future__ import annotations

from typing import Any

from visioneval import excerpts
from visioneval.benchmarks.blindtest import protocols
from visioneval.benchmarks.blindtest.spec import LMMS, PAPER, VLMEVALKIT
from visioneval.harness.differences import Counterfactual, reference_block

Scored = tuple[dict[str, Any], dict[str, dict[str, float]]]


def score(family: str, task: str, text: str, label: str) -> Scored:
    """(parsed, scores) of one answer: the reading of the protocol that sent the prompt and
    whether it is right (the paper's block with the other rules' readings of its answer)."""
    reading = protocols.read(family, task, text)
    right = float(protocols.correct(family, task, reading, label))
    parsed = {family: excerpts.excerpt(reading)}
    if family != PAPER:
        return parsed, {family: {"correct": right}}
    others = {p: Counterfactual(extraction=float(protocols.correct(
        p, task, protocols.read(p, task, text), label))) for p in (LMMS, VLMEVALKIT)}
    return parsed, {PAPER: reference_block(right, others)}
