"""HallusionBench's metrics from records, worked out by hand from the paper's definitions
(tianyi-lab/HallusionBench utils.py): get_eval_fig :130-163 (a figure counts when every
question on it is right), get_eval_pair_all :205-338 (a question across its figures),
get_eval_pair_easy/hard :340-402, yes_ratio_stats :414-427; a failed request leaves its
figure and question group out."""

from __future__ import annotations

import pytest

from visioneval.benchmarks.hallusionbench import metrics, scoring
from visioneval.benchmarks.hallusionbench.items import parse_row
from visioneval.core.records import Record, Response

PROTOCOLS = ["paper", "lmms-eval", "vlmevalkit"]


def record(figure: str, question: str, answer: str, said: str | None) -> Record:
    found = parse_row({"category": "VD", "subcategory": "figure", "set_id": "0",
                       "visual_input": "1" if figure == "0" else "2", "figure_id": figure,
                       "question_id": question, "question": "Is it?", "gt_answer": answer,
                       "gt_answer_details": "It is."})
    if said is None:
        return Record(id=found.key, group=found.l2, target={}, metadata=found.metadata(),
                      response=Response(error="HTTP 500"))
    parsed, scores = scoring.score({"original": found}, said, PROTOCOLS, {})
    return Record(id=found.key, group=found.l2, target={}, metadata=found.metadata(),
                  response=Response(text=said), parsed=parsed, scores=scores)


NOTE = {"manifest": "x", "corrections": 0, "searched": ""}


def test_the_papers_numbers_on_a_set_worked_out_by_hand():
    # figure 0: q0 (yes) right, q1 (no) wrong; figure 1: q0 (no) right, q1 (yes) wrong.
    records = [record("0", "0", "1", "Yes"), record("0", "1", "0", "Yes"),
               record("1", "0", "0", "No"), record("1", "1", "1", "No")]
    found = metrics.summarize(records, PROTOCOLS, ["original"], NOTE)["protocols"]["paper"]
    overall = found["overall"]
    assert overall["aAcc"] == 0.5 and overall["n_aAcc"] == 4
    assert overall["fAcc"] == 0 and overall["n_fAcc"] == 2  # both figures have a wrong one
    assert overall["qAcc"] == 0.5 and overall["n_qAcc"] == 2  # q0 right on both figures
    assert overall["easy"] == 0.5 and overall["hard"] == 0.5
    assert found["figures"] == {"n": 2, "all_right": 0.0, "all_wrong": 0.0, "mixed": 1.0,
                                "mean_accuracy": 0.5}
    bias = found["yes_no"]
    # yes_ratio_stats: "yes" = correct == gt (right on yes, wrong on no): 2 of 4; the
    # labels' yes: 2 of 4; the wrong answers' no-labels: 1 of 2.
    assert bias["inferred_yes"] == 0.5 and bias["truth_yes"] == 0.5
    assert bias["difference"] == 0 and bias["false_yes_share"] == 0.5
    assert bias["said_yes"] == 0.5 and bias["said_no"] == 0.5


def test_a_failed_request_leaves_its_figure_and_group_out():
    records = [record("0", "0", "1", "Yes"), record("0", "1", "0", "No"),
               record("1", "0", "0", None), record("1", "1", "1", "Yes")]
    paper = metrics.summarize(records, PROTOCOLS, ["original"], NOTE)["protocols"]["paper"]
    overall = paper["overall"]
    assert paper["n"] == 3 and paper["n_errors"] == 1
    assert overall["aAcc"] == 1.0
    assert overall["n_fAcc"] == 1 and overall["fAcc"] == 1.0  # figure 1 is incomplete
    assert overall["n_qAcc"] == 1 and overall["qAcc"] == 1.0  # question 0 is incomplete
    assert overall["incomplete"] == 2


def test_nothing_scored_is_said_never_zero():
    paper = metrics.summarize([record("0", "0", "1", None)], ["paper"], ["original"],
                              NOTE)["protocols"]["paper"]
    assert paper["unavailable"] == "no scored answers (1 failed requests)"
    assert "aAcc" not in paper["overall"]
    assert paper["overall"]["aAcc_unavailable"] == "no complete question to count"


def test_intervals_resample_sets():
    records = []
    for set_id in range(6):
        for figure in ("0", "1"):
            found = parse_row({"category": "VS", "subcategory": "map", "set_id": str(set_id),
                               "visual_input": "1" if figure == "0" else "2",
                               "figure_id": figure, "question_id": "0", "question": "Is it?",
                               "gt_answer": "1", "gt_answer_details": "Yes."})
            said = "Yes" if set_id % 2 else "No"
            parsed, scores = scoring.score({"original": found}, said, PROTOCOLS, {})
            records.append(Record(id=found.key, group=found.l2, target={},
                                  metadata=found.metadata(), response=Response(text=said),
                                  parsed=parsed, scores=scores))
    overall = metrics.summarize(records, PROTOCOLS, ["original"], NOTE)["protocols"][
        "vlmevalkit"]["overall"]
    assert overall["aAcc"] == 0.5 and overall["aAcc_ci95_n_clusters"] == 6
    low, high = overall["aAcc_ci95"]
    assert low < 0.5 < high
    # Each set is all right or all wrong: its figures move together, so aAcc and fAcc have
    # the same interval.
    assert overall["fAcc_ci95"] == pytest.approx(overall["aAcc_ci95"])


def test_explains_units_are_the_questions_aacc_counts():
    """`visioneval explain`'s units: a failed request and a question a protocol does not ask
    add nothing; a corrected label moves only the corrected share; each unit is drawn with
    its set."""
    records = [record("0", "0", "1", "Yes"), record("0", "1", "0", "Yes"),
               record("1", "0", "0", None), record("1", "1", "1", "Yes")]
    found = parse_row({"category": "VS", "subcategory": "map", "set_id": "3",
                       "visual_input": "0", "figure_id": "0", "question_id": "0",
                       "question": "Is it?", "gt_answer": "1", "gt_answer_details": "Yes."})
    fixed = parse_row({**found.metadata(), "question": "Is it?", "gt_answer": "0",
                       "gt_answer_details": "No."})
    parsed, scores = scoring.score({"original": found, "corrected": fixed}, "Yes", PROTOCOLS,
                                   {})
    records.append(Record(id=found.key, group=found.l2, target={}, metadata=found.metadata(),
                          response=Response(text="Yes"), parsed=parsed, scores=scores))
    label_sets = ["original", "corrected"]
    units = list(metrics.question_units(records, PROTOCOLS, label_sets))
    assert [u.cluster for u in units] == ["set VD_figure_0"] * 3 + ["set VS_map_3"]
    assert set(units[-1].shares) == {("paper", "original"), ("paper", "corrected")}
    summary = metrics.summarize(records, PROTOCOLS, label_sets, NOTE)
    for labels, block in (("original", "protocols"), ("corrected", "corrected")):
        for protocol in PROTOCOLS:
            shares = [u.shares[(protocol, labels)] for u in units
                      if (protocol, labels) in u.shares]
            aacc = sum(s.num for s in shares) / sum(s.den for s in shares)
            assert aacc == pytest.approx(summary[block][protocol]["overall"]["aAcc"])
    assert summary["corrected"]["paper"]["overall"]["aAcc"] == 0.5  # the VS answer now wrong
    assert summary["protocols"]["paper"]["overall"]["aAcc"] == 0.75
