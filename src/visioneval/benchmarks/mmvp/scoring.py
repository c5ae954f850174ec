"""One answer scored under every protocol that reads its prompt, against every label set.

A record's scores: `P` (protocol P against its own labels: lmms-eval's copy for lmms-eval,
the published labels for the others) and `P/corrected` (against visioneval's corrected
labels). The paper's record also carries, for each other protocol run, the paper's answer
read part of the way to that protocol (`harness.differences.reference_block`): against its
labels, then with its extraction, so "why the protocols differ" can charge each cause."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from visioneval.benchmarks.mmvp import readings
from visioneval.benchmarks.mmvp.labels import Labels
from visioneval.benchmarks.mmvp.questions import Question
from visioneval.benchmarks.mmvp.spec import CORRECTED, score_key
from visioneval.harness.differences import Counterfactual, reference_block


def corrected_key(protocol: str) -> str:
    return score_key(protocol, CORRECTED)


def paper_answer(letter: str | None) -> str:
    return f"({letter})" if letter else ""


def score(prompt: str, text: str, q: Question, labels: Labels, protocols: Sequence[str]
          ) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    """(parsed, scores) of an answer to `prompt` (the protocol whose prompt it is)."""
    if prompt == "paper":
        return _paper(text, q, labels, protocols)
    if prompt == "lmms-eval":
        letter = readings.lmms_eval(text)
        return {"lmms-eval": letter}, _both("lmms-eval", letter, labels, upper=True)
    found = readings.vlmevalkit(text, q)
    return {"vlmevalkit": found or ""}, _both("vlmevalkit", found, labels, upper=True)


def _both(protocol: str, letter: str | None, labels: Labels, *, upper: bool
          ) -> dict[str, dict[str, float]]:
    def right(label_set: str) -> float:
        label = labels.of(protocol, label_set)
        return float(letter == (label.upper() if upper else label))

    return {protocol: {"correct": right("original")},
            corrected_key(protocol): {"correct": right(CORRECTED)}}


def _paper(text: str, q: Question, labels: Labels, protocols: Sequence[str]
           ) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    reading = readings.paper(text, q)
    others = {}
    if "lmms-eval" in protocols:
        lmms = labels.of("lmms-eval", "original")
        others["lmms-eval"] = Counterfactual(
            label_set=float(reading.letter == lmms),
            extraction=float(readings.lmms_eval(text) == lmms.upper()))
    if "vlmevalkit" in protocols:
        others["vlmevalkit"] = Counterfactual(
            extraction=float(readings.vlmevalkit(text, q) == labels.published.upper()))
    block = reference_block(float(reading.letter == labels.published), others)
    parsed = {"paper": paper_answer(reading.letter), "paper_reading": reading.how}
    return parsed, {"paper": block,
                    corrected_key("paper"): {"correct": float(reading.letter == labels.corrected)}}
