"""One answer scored under every protocol that reads its prompt, against every label set.

A record's scores: `P` (protocol P against the published labels, which every protocol reads
from the same Hub copy) and `P/corrected` (against corrections.json). The paper's record also
carries, for each other protocol run, the paper's answer read with that protocol's
extraction (`harness.differences.reference_block`), so "why the protocols differ" charges
extraction and prompt apart. A label is "(A)" ...; lmms-eval and VLMEvalKit compare letters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from visioneval.benchmarks.blink import readings
from visioneval.benchmarks.blink.questions import Question
from visioneval.benchmarks.blink.spec import CORRECTED, score_key
from visioneval.harness.differences import Counterfactual, reference_block


def score(prompt: str, text: str, q: Question, corrected: str, protocols: Sequence[str]
          ) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    """(parsed, scores) of an answer to `prompt` (the protocol whose prompt it is);
    `corrected`: the question's label after corrections.json ("(A)" ...)."""
    if prompt == "paper":
        reading = readings.paper(text, q)
        others = {}
        if "lmms-eval" in protocols:
            others["lmms-eval"] = Counterfactual(
                extraction=float(readings.lmms_eval(text) == q.letter))
        if "vlmevalkit" in protocols:
            others["vlmevalkit"] = Counterfactual(
                extraction=float(readings.vlmevalkit(text, q) == q.letter))
        parsed = {"paper": reading.token or "", "paper_reading": reading.how}
        return parsed, {"paper": reference_block(float(reading.token == q.answer), others),
                        score_key("paper", CORRECTED): {
                            "correct": float(reading.token == corrected)}}
    letter = readings.lmms_eval(text) if prompt == "lmms-eval" else readings.vlmevalkit(text, q)
    return {prompt: letter or ""}, {
        prompt: {"correct": float(letter == q.letter)},
        score_key(prompt, CORRECTED): {"correct": float(letter == corrected.strip("()"))}}
