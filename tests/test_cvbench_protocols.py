"""CV-Bench's three protocols on hand-made answers: each verdict derived from the reference
code named beside it.

- paper: `extract_mcq_answer` (cambrian eval/eval/ade/ade_test.py:21-31; Omni3D
  omni_test.py:21-31 also strips ':' and ',' and accepts the option's text, :66-71);
- lmms-eval: `_extract_answer_letter` (lmms_eval/tasks/cv_bench/utils.py:6-24), compared
  with the gold letter (utils.py:44-49);
- VLMEvalKit: `can_infer` (vlmeval/utils/matching_util.py), no judge: 'Z', wrong
  (vlmeval/dataset/utils/multiple_choice.py:380-383).
"""

from __future__ import annotations

import pytest

from visioneval.benchmarks.cvbench import protocols

COUNT = ["3", "2", "1", "0"]  # an ADE20K Count item, gold (B)
DEPTH = ["lamp", "chair"]  # an Omni3D Depth item, gold (A)

# (answer, source, choices, gold, paper, lmms-eval, vlmevalkit)
CASES = [
    ("B", "ADE20K", COUNT, "B", True, True, True),
    # lstrip('(') and rstrip(')') leave "b"; re.match reads b; "(b)" is no token for
    # VLMEvalKit (letters count case-sensitively) and no option's text: Z
    ("(b)", "ADE20K", COUNT, "B", True, True, False),
    ("B.", "ADE20K", COUNT, "B", True, True, True),
    # the paper splits on "answer is"; lmms-eval reads the T of "The"
    ("The answer is (B).", "ADE20K", COUNT, "B", True, False, True),
    # "Yes, but": first character y for both rules; B is a late lone token for VLMEvalKit
    ("Yes, but B.", "ADE20K", COUNT, "B", False, False, True),
    ("", "ADE20K", COUNT, "B", False, False, False),
    # a refusal VLMEvalKit knows: Z; the others read "i"
    ("I'm sorry, but without the image provided I cannot answer.", "ADE20K", COUNT, "B",
     False, False, False),
    # a reasoning block left in the text: "<" for the paper, no letter for lmms-eval
    ("<think>Two chairs, so B.</think> B", "ADE20K", COUNT, "B", False, False, True),
    # both letters: the first character "a" is wrong; VLMEvalKit finds two letters: Z
    ("A and B are both possible", "ADE20K", COUNT, "B", False, False, False),
    # the option's text: only VLMEvalKit's can_infer_text reads it
    ("2", "ADE20K", COUNT, "B", False, False, True),
    # "answer:" split; lmms-eval reads the A of "Answer", right by chance
    ("Answer: (A)", "Omni3D", DEPTH, "A", True, True, True),
    ("a", "Omni3D", DEPTH, "A", True, True, False),
    ("The lamp", "Omni3D", DEPTH, "A", False, False, True),
]


@pytest.mark.parametrize(("text", "source", "choices", "gold", "paper", "lmms", "vlm"), CASES)
def test_each_protocol_reads_an_answer_as_its_code_does(text, source, choices, gold, paper,
                                                        lmms, vlm):
    got = [protocols.read(p, text, source, choices, gold).correct
           for p in ("paper", "lmms-eval", "vlmevalkit")]
    assert got == [paper, lmms, vlm]


def test_the_paper_keeps_one_character_after_the_last_answer_keyword():
    assert protocols.paper_text("I think the answer is C, not A.", "COCO") == "c"
    assert protocols.paper_text("Answer is: (D).", "COCO") == ":"  # "answer is" first
    assert protocols.paper_text("(A),", "Omni3D") == "a"
    assert protocols.paper_text("(A),", "COCO") == "a"  # the first character all the same
    assert protocols.lmms_eval_letter("  (c) three") == "C"
    assert protocols.lmms_eval_letter("3") == ""


def test_the_three_prompts():
    text = "How many chairs? Select from the following choices.\n(A) 3\n(B) 2\n(C) 1"
    choices = ["3", "2", "1"]
    assert protocols.prompt("paper", text, choices) == (
        text + "\nAnswer with the option's letter from the given choices directly.")
    assert protocols.prompt("lmms-eval", text, choices) == (
        "Note: You only need to respond with A, B, C without providing any additional "
        "information.\n\n" + text)
    assert protocols.prompt("vlmevalkit", text, choices) == text


def test_a_gold_answer_must_name_an_option():
    assert protocols.gold_letter("(C)", ["a", "b", "c"]) == "C"
    with pytest.raises(ValueError, match="names no option"):
        protocols.gold_letter("(D)", ["a", "b", "c"])
    with pytest.raises(ValueError, match="bracketed letter"):
        protocols.gold_letter("C", ["a", "b", "c"])
