"""MMVP's metrics from hand-made records: pair accuracy as the paper's grader counts it (two
consecutive questions, both right; scripts/gpt_grader.py lines 59-69), per-question accuracy
with its interval drawn by pairs, failed requests and incomplete pairs, the label sets and
the corrections manifest, per pattern, and why the protocols differ."""

from __future__ import annotations

import json

import pytest

from visioneval.benchmarks.mmvp.definition import DEFINITION
from visioneval.benchmarks.mmvp.labels import FIELD, labels, manifest
from visioneval.benchmarks.mmvp.metrics import summarize
from visioneval.benchmarks.mmvp.metrics_model import MmvpMetrics
from visioneval.benchmarks.mmvp.patterns import pattern, tags
from visioneval.benchmarks.mmvp.questions import Question
from visioneval.core.records import Record, Response
from visioneval.harness.corrections import Corrections
from visioneval.harness.differences import DifferenceSummary, reference_block


def record(index: int, prompt: str, correct: float | None, *, corrected: float | None = None,
           extra: dict | None = None, parsed: str = "(a)") -> Record:
    """One scored answer (None: a failed request) to question `index`."""
    response = Response(text="answer") if correct is not None else Response(error="timeout")
    scores = {}
    if correct is not None:
        scores[prompt] = reference_block(correct, {}) | (extra or {})
        scores[f"{prompt}/corrected"] = {"correct": correct if corrected is None else corrected}
    return Record(id=f"{index}/{prompt}", group="MMVP", target={}, response=response,
                  parsed={prompt: parsed if correct is not None else ""},
                  scores=scores, metadata={"item": str(index), "index": index,
                                           "pair": (index + 1) // 2, "prompt": prompt,
                                           "pattern": pattern(index)})


def test_pair_and_question_accuracy_with_failed_and_incomplete_pairs():
    verdicts = {1: 1.0, 2: 1.0, 3: 1.0, 4: 0.0, 5: 0.0, 6: 0.0, 7: 1.0, 8: None, 9: 1.0}
    metrics = summarize([record(i, "paper", v) for i, v in verdicts.items()], ["paper"],
                        ["original"])
    block = metrics["protocols"]["paper"]["original"]
    assert (block["n"], block["n_errors"]) == (8, 1)
    assert block["accuracy"] == pytest.approx(5 / 8)
    # Pairs 1-3 are complete (right, half, wrong); 4 lost a question to an error; 5 has one
    # question in the run: both incomplete, neither counted.
    assert (block["n_pairs"], block["incomplete_pairs"]) == (3, 2)
    assert block["pair_accuracy"] == pytest.approx(1 / 3)
    assert block["accuracy_ci95_clusters"] == "pair" and block["accuracy_ci95_n_clusters"] == 5
    low, high = block["pair_accuracy_ci95"]
    assert 0 <= low <= 1 / 3 <= high <= 1
    MmvpMetrics.model_validate(metrics)


def test_nothing_scored_is_absent_with_a_reason():
    metrics = summarize([record(1, "paper", None), record(2, "paper", None)], ["paper"],
                        ["original"])
    block = metrics["protocols"]["paper"]["original"]
    assert "accuracy" not in block and "pair_accuracy" not in block
    assert block["unavailable"] == "no scored answer (2 failed requests)"
    MmvpMetrics.model_validate(metrics)


def test_per_pattern_uses_pixmmvps_tags_and_drops_the_mixed_pair():
    assert pattern(1) == "State and Condition" and pattern(99) == \
        "Presence of Specific Features"
    assert (pattern(187), pattern(188)) == ("Presence of Specific Features",
                                            "Orientation and Direction")
    records = [record(i, "paper", 1.0) for i in (1, 2, 187, 188)]
    cells = summarize(records, ["paper"], ["original"])["protocols"]["paper"]["original"][
        "per_pattern"]
    assert cells["State and Condition"] == {"n": 2, "accuracy": 1.0, "n_pairs": 1,
                                            "pair_accuracy": 1.0}
    assert cells["Presence of Specific Features"] == {"n": 1, "accuracy": 1.0, "n_pairs": 0}
    assert cells["Orientation and Direction"]["n_pairs"] == 0
    assert len(tags().patterns) == 9 and len(tags().questions) == 300


def test_label_sets_side_by_side_with_what_the_corrections_change():
    records = [record(99, "paper", 1.0), record(100, "paper", 1.0, corrected=0.0),
               record(1, "paper", 1.0), record(2, "paper", 0.0)]
    metrics = summarize(records, ["paper"], ["original", "corrected"])
    paper = metrics["protocols"]["paper"]
    assert paper["original"]["pair_accuracy"] == pytest.approx(1 / 2)
    assert paper["corrected"]["pair_accuracy"] == 0.0
    effect = metrics["corrections"]["effect"]["paper"]
    assert effect["changed"] == 1
    assert effect["pair_accuracy"] == pytest.approx(-1 / 2)
    assert effect["accuracy"] == pytest.approx(-1 / 4)
    assert metrics["corrections"]["items"] == ["100", "279", "280"]


def test_unread_answers_are_counted_per_protocol():
    records = [record(1, "paper", 0.0, parsed=""), record(2, "paper", 1.0),
               record(1, "vlmevalkit", 0.0, parsed=""), record(2, "vlmevalkit", 0.0,
                                                               parsed="Z"),
               record(1, "lmms-eval", 0.0, parsed="")]
    records[0].parsed["paper_reading"] = "names both options"
    metrics = summarize(records, ["paper", "lmms-eval", "vlmevalkit"], ["original"])
    unparsed = {p: b["unparsed"] for p, b in metrics["protocols"].items()}
    assert unparsed == {
        "paper": {"names both options": 1},
        "lmms-eval": {"no letter found (scored wrong)": 1},
        "vlmevalkit": {"left to VLMEvalKit's judge model: scored Z (wrong) without one": 1,
                       "Z: a refusal, or the judge matched no option": 1}}
    assert DEFINITION.unparsed(metrics) == 4  # the report's "unparsed" card


def test_differences_charge_each_cause_and_say_the_pair_gap():
    # Question 1: the paper reads (a), right; lmms-eval's labels agree; its regex on the
    # paper's answer is wrong; its own answer is right. Question 2: all right everywhere.
    paper1 = record(1, "paper", 1.0, extra={"lmms-eval|label set": 1.0,
                                            "lmms-eval|extraction": 0.0})
    paper2 = record(2, "paper", 1.0, extra={"lmms-eval|label set": 1.0,
                                            "lmms-eval|extraction": 1.0})
    lmms1, lmms2 = record(1, "lmms-eval", 1.0), record(2, "lmms-eval", 0.0)
    metrics = summarize([paper1, lmms1, paper2, lmms2], ["paper", "lmms-eval"], ["original"])
    summary = DifferenceSummary.model_validate(metrics["differences"])
    mine = summary.of("lmms-eval")
    assert mine is not None and (mine.compared, mine.differ) == (2, 1)
    moves = {c.cause: (c.items, c.gained, c.lost) for c in mine.causes}
    assert moves == {"extraction": (1, 0, 1), "prompt": (2, 1, 1)}
    notes = {n.cause: n for n in summary.notes}
    assert notes["pair accuracy (all causes)"].points == pytest.approx(-100.0)
    assert "mmvp_pair_accuracy" in notes["aggregation"].what


def q(index: int, answer: str) -> Question:
    return Question(index, "Does the elephant have long or short tusks?",
                    "(a) Long (b) Short", answer)


def test_label_sets_from_either_copy():
    # MMVP/MMVP: lmms-eval's labels are the published ones with its four changes.
    found, notes = labels(q(99, "(a)"), "MMVP/MMVP")
    assert (found.published, found.lmms_eval, found.corrected, notes) == ("a", "b", "a", [])
    found, _ = labels(q(100, "(b)"), "MMVP/MMVP")
    assert (found.published, found.lmms_eval, found.corrected) == ("b", "a", "a")
    # lmms-lab-eval/MMVP: the published labels are its own with the changes undone.
    found, _ = labels(q(280, "(a)"), "lmms-lab-eval/MMVP")
    assert (found.published, found.lmms_eval, found.corrected) == ("b", "a", "a")
    found, _ = labels(q(5, "(a)"), "lmms-lab-eval/MMVP")
    assert (found.published, found.lmms_eval, found.corrected) == ("a", "a", "a")
    # A copy holding neither value keeps its label everywhere, and says so.
    found, notes = labels(q(279, "(b)"), "MMVP/MMVP")
    assert (found.published, found.lmms_eval, found.corrected) == ("b", "b", "b")
    assert notes == ["Index 279: the data holds (b), where lmms-eval's copy changes (a) to "
                     "(b); its label is kept for every label set"]  # (b) is the corrected one


def test_the_manifest_is_sourced_and_only_two_sources_make_a_correction(tmp_path):
    found = manifest()
    assert found.benchmark == "mmvp" and [c.item for c in found.corrections] == \
        ["100", "279", "280"]
    for c in found.corrections:
        assert c.field == FIELD and "#" in c.source and "Not viewed by visioneval" in \
            c.evidence
    assert "Index 99 is disputed" in found.searched
    bad = tmp_path / "corrections.json"
    bad.write_text(json.dumps({"benchmark": "mmvp", "version": "x", "corrections": [
        {"item": "1", "field": FIELD, "original": "(a)", "corrected": "(b)"}]}))
    with pytest.raises(Exception, match="corrections.0.source: Field required"):
        Corrections.load(bad)

