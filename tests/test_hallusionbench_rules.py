"""HallusionBench's readings of hand-made answers, each expected verdict worked out from the
reference code it stands for:

- VLMEvalKit's Yes/No word (open-compass/VLMEvalKit e8e78f0, vlmeval/dataset/utils/yorn.py:
  254-261 `YOrN_Extraction`, after vlmeval/smp/misc.py:18-33 `process_punctuation`);
- the paper's grader code (tianyi-lab/HallusionBench 744007c, utils.py:58-64) and
  `assign_correctness` (utils.py:404-411), which lmms-eval copies (lmms_eval/tasks/
  hallusion_bench/utils.py:72-78, 161-168);
- one answer scored under every protocol (`scoring.score`)."""

from __future__ import annotations

import pytest

from visioneval.backends.reasoning import split
from visioneval.benchmarks.hallusionbench import rules, scoring
from visioneval.benchmarks.hallusionbench.items import Item, parse_row

# (answer, YOrN_Extraction's word). misc.py:26-31 deletes a mark written next to a space and
# replaces it by a space otherwise; quotes, colons and asterisks are not in its list.
YES_NO = [
    ("Yes", "Yes"),
    ("Yes, but the left circle looks larger.", "Yes"),  # ", " deleted: "yes but ..."
    ("No.", "No"),  # the period goes (misc.py:32)
    ("NO", "No"),  # lowercased first (yorn.py:255)
    ("No, it is not the same size.", "No"),
    ("Yes,the circles are equal", "Yes"),  # no ", ": the comma becomes a space
    ("No, 1,000 people live there", "No"),  # a number with a comma: every mark deleted
    ("Yes and no.", "Unknown"),  # both words
    ("There is no doubt: yes.", "Unknown"),
    ("Yes/No", "Unknown"),  # "/" becomes a space: "yes no"
    ("(a)", "Unknown"),
    ("A.", "Unknown"),
    ("both", "Unknown"),
    ("", "Unknown"),
    ("I cannot tell from the image.", "Unknown"),  # a refusal
    ("'Yes'", "Unknown"),  # apostrophes stay: the word is 'yes'
    ("**Yes**", "Unknown"),  # Markdown bold stays: the word is **yes**
    ("Answer: No", "No"),
    ("Eyes are open.", "Unknown"),  # words, not substrings
    ("Nope", "Unknown"),
    # A reasoning model's reply read whole: "<", ">" and "/" become spaces, so the thinking's
    # "no" and the answer's "yes" are both words.
    ("<think>Maybe no.</think>Yes", "Unknown"),
]


@pytest.mark.parametrize(("answer", "word"), YES_NO)
def test_vlmevalkit_yes_no_word(answer, word):
    assert rules.yes_no(answer) == word


def test_a_reasoning_models_thinking_is_set_aside_before_the_reading():
    """visioneval splits the thinking off before any rule reads the answer (backends/
    reasoning.py), so only "Yes" is read; VLMEvalKit would read the whole reply."""
    got = split("<think>Maybe no. The left one could be larger.</think>\n\nYes")
    assert got.answer.strip() == "Yes" and rules.yes_no(got.answer) == "Yes"


def test_punctuation_deletes_at_most_32_periods():
    """misc.py:32 passes re.UNICODE (32) where `sub` takes its count."""
    text = "." * 40 + "no."
    assert rules.punctuation(text) == "." * 8 + "no."
    assert rules.yes_no(text) == "Unknown"


# (grader reply, code): "incorrect" anywhere wins, then "correct" anywhere (utils.py:58-64).
GRADER = [("correct", 1), ("Correct.", 1), ("incorrect", 0), ("Incorrect", 0),
          ("The prediction is correct, not incorrect.", 0), ("unclear", 2), ("", 2),
          ("The answer does not conflict", 2)]


@pytest.mark.parametrize(("reply", "code"), GRADER)
def test_grader_reply_codes(reply, code):
    assert rules.judge_code(reply) == code


def test_assign_correctness_counts_unclear_right_only_without_a_figure():
    """utils.py:407-410: a VS question with figure_id 0 is right when the grader says
    correct or unclear; any other question only when it says correct."""
    assert rules.paper_correct(rules.UNCLEAR, no_figure=True)
    assert not rules.paper_correct(rules.INCORRECT, no_figure=True)
    assert not rules.paper_correct(rules.UNCLEAR, no_figure=False)
    assert rules.paper_correct(rules.CORRECT, no_figure=False)


def test_rule_code_stands_for_the_grader():
    assert rules.rule_code("Yes", "1") == rules.CORRECT
    assert rules.rule_code("Yes", "0") == rules.INCORRECT
    assert rules.rule_code("No", "0") == rules.CORRECT
    assert rules.rule_code("Unknown", "1") == rules.UNCLEAR
    assert rules.vlmevalkit_correct("No", "0") and not rules.vlmevalkit_correct("Unknown", "0")


def item(category="VD", figure="1", visual="2", answer="1") -> Item:
    return parse_row({"category": category, "subcategory": "chart" if category == "VS"
                      else "illusion", "visual_input": visual, "set_id": "3",
                      "figure_id": figure, "question_id": "2", "question": "Is it?",
                      "gt_answer": answer, "gt_answer_details": "It is."})


PROTOCOLS = ["paper", "lmms-eval", "vlmevalkit"]


def test_one_answer_under_every_protocol():
    parsed, scores = scoring.score({"original": item()}, "**Yes**, it is.", PROTOCOLS, {})
    # "**yes**" is no word for VLMEvalKit's rule, nor for visioneval's stand-in grader.
    assert parsed["vlmevalkit"] == "Unknown" and scores["vlmevalkit"]["correct"] == 0.0
    assert parsed["paper"] == "Unknown" and scores["paper"]["correct"] == 0.0
    assert scores["paper"]["code"] == rules.UNCLEAR
    assert "lmms-eval|excluded" not in scores["paper"]


def test_a_question_without_a_figure_is_the_papers_alone():
    unsure = "I am not sure; I would need the chart."
    no_figure = item("VS", figure="0", visual="0")
    parsed, scores = scoring.score({"original": no_figure}, unsure, PROTOCOLS, {})
    assert set(scores) == {"paper"}  # lmms-eval and VLMEvalKit never ask it
    assert scores["paper"]["correct"] == 1.0  # unclear without a figure counts right
    assert scores["paper"]["lmms-eval|excluded"] == 1.0
    assert scores["paper"]["vlmevalkit|excluded"] == 1.0
    # On the chart, the same reply is wrong.
    _, scores = scoring.score({"original": item("VS", figure="1", visual="1")}, unsure,
                              PROTOCOLS, {})
    assert scores["paper"]["correct"] == 0.0


def test_judge_verdicts_replace_the_rule():
    """With a grader's code the paper and lmms-eval read it; VLMEvalKit's judge answers for
    an Unknown only."""
    verdicts = {"original": scoring.Verdicts(grader=rules.CORRECT, matcher="Yes")}
    parsed, scores = scoring.score({"original": item()}, "It looks that way.", PROTOCOLS,
                                   verdicts)
    assert parsed["paper"] == parsed["lmms-eval"] == "correct"
    assert scores["paper"]["correct"] == scores["lmms-eval"]["correct"] == 1.0
    assert parsed["vlmevalkit"] == "Yes" and scores["vlmevalkit"]["correct"] == 1.0
    parsed, _ = scoring.score({"original": item()}, "No.", PROTOCOLS, verdicts)
    assert parsed["vlmevalkit"] == "No"  # the rule read it: the judge's word is not used


def test_corrected_labels_score_only_items_they_change():
    original = item(answer="1")
    fixed = item(answer="0")
    _, scores = scoring.score({"original": original, "corrected": fixed}, "Yes", PROTOCOLS,
                              {})
    assert scores["paper"]["correct"] == 1.0 and scores["paper (corrected)"]["correct"] == 0.0
    _, scores = scoring.score({"original": original, "corrected": original}, "Yes",
                              PROTOCOLS, {})
    assert not any(k.endswith("(corrected)") for k in scores)


@pytest.mark.parametrize(("column", "value", "said"), [
    ("category", "VX", "column 'category' is 'VX', not one of VD, VS"),
    ("gt_answer", "2", "column 'gt_answer' is '2', not one of 0, 1"),
    ("question", "  ", "column 'question' is empty or not text"),
    ("set_id", None, "column 'set_id' is empty or not text"),
])
def test_a_bad_row_names_its_column(column, value, said):
    row = {"category": "VD", "subcategory": "math", "visual_input": "1", "set_id": "0",
           "figure_id": "0", "question_id": "0", "question": "Is it?", "gt_answer": "1",
           "gt_answer_details": "Yes."} | {column: value}
    with pytest.raises(ValueError, match=said.replace("(", r"\(")):
        parse_row(row)


def test_the_label_sets_are_the_harness_kits():
    """options.py spells `LabelSet` itself (it loads when the command line starts)."""
    from typing import get_args

    from visioneval.benchmarks.hallusionbench.options import HallusionBenchOptions, LabelSet
    from visioneval.harness.corrections import LabelSet as KitLabelSet
    from visioneval.harness.corrections import label_sets

    assert get_args(LabelSet) == get_args(KitLabelSet)
    for chosen in get_args(LabelSet):
        assert HallusionBenchOptions(labels=chosen).label_sets == label_sets(chosen)
