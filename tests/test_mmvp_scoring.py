"""MMVP's prompts and answer readings, each against its reference code, on hand-made answers
whose verdicts are worked out from that code (file and line at the commits docs/mmvp.md
names): the paper's repository tsb0601/MMVP at 7635005, lmms-eval at 75571cfe
(lmms_eval/tasks/mmvp/utils.py), VLMEvalKit at e8e78f05 (vlmeval/utils/matching_util.py,
vlmeval/dataset/utils/multiple_choice.py, vlmeval/dataset/image_mcq.py)."""

from __future__ import annotations

import pytest

from visioneval.backends.reasoning import split
from visioneval.benchmarks.mmvp import prompts, readings
from visioneval.benchmarks.mmvp.labels import Labels
from visioneval.benchmarks.mmvp.questions import Question, Skip, checked, parse_options
from visioneval.benchmarks.mmvp.scoring import score
from visioneval.benchmarks.mmvp.spec import AMBIGUOUS, UNPARSED
from visioneval.harness.differences import verdicts

FEET = Question(107, "Are the butterfly's feet visible?", "(a) Yes (b) No", "(a)")
PATH = Question(189, "Is the person in the picture on the grass or on the gravel path?",
                "(a) Grass (b) Gravel path", "(a)")
DAISY = Question(63, "Is the following statement correct: In the image, there is one daisy "
                 "that is under the shadow of a taller daisy.", " (a) Correct (b) Incorrect",
                 "(a)")
BUTTON = Question(133, "What does the center button say?", "(a) OK/SELECT (b) OK", "(a)")
EASTER = Question(202, "What are the words in the image:",
                  '(a) "Happy Easter" (b) "Happy Easter!"', "(b)")
REFUSAL = "I'm sorry, but without the image provided, I cannot tell."


# -- prompts ----------------------------------------------------------------------------------

def test_paper_prompt_is_question_space_options_verbatim():
    # scripts/evaluate_mllm.py line 59: row['Question'] + " " + row['Options'].
    assert prompts.paper(FEET) == "Are the butterfly's feet visible? (a) Yes (b) No"
    # The stored leading space of Index 63's options stays: two spaces.
    assert prompts.paper(DAISY).endswith("taller daisy.  (a) Correct (b) Incorrect")


def test_lmms_eval_prompt_matches_its_snapshot():
    # lmms-eval's own prompt snapshot (test/eval/prompt_stability/snapshots/mmvp.json).
    arrow = Question(2, "Is the arrow pointing up or down?", "(a) Up (b) Down", "(b)")
    assert prompts.lmms_eval(arrow) == ("Is the arrow pointing up or down?\nA. Up\nB. Down\n"
                                        "Answer with the option's letter from the given "
                                        "choices directly.")
    # _parse_options (utils.py lines 86-90) strips each option: the leading space goes.
    assert prompts.lmms_eval(DAISY).endswith("daisy.\nA. Correct\nB. Incorrect\nAnswer with "
                                             "the option's letter from the given choices "
                                             "directly.")


def test_vlmevalkit_prompt_is_the_generic_mcq_prompt():
    # image_mcq.py lines 223-239: "Question: ", "Options:\n", "A. ...\n", the instruction.
    assert prompts.vlmevalkit(PATH) == (
        "Question: Is the person in the picture on the grass or on the gravel path?\n"
        "Options:\nA. Grass\nB. Gravel path\n"
        "Please select the correct answer from the options above. \n")


def test_options_and_rows_checked():
    assert parse_options('(a) "Happy Easter" (b) "Happy Easter!"') == \
        ['"Happy Easter"', '"Happy Easter!"']
    assert checked("7", "Q?", "(a) X (b) Y", "(b)").index == 7
    for bad, said in ((("x", "Q?", "(a) X (b) Y", "(a)"), "Index 'x'"),
                      ((3, "", "(a) X (b) Y", "(a)"), "Question is empty"),
                      ((3, "Q?", "X or Y", "(a)"), "does not hold two options"),
                      ((3, "Q?", "(a) X (b) Y", "(c)"), "Correct Answer '(c)'")):
        with pytest.raises(Skip, match=said.replace("(", r"\(").replace(")", r"\)")):
            checked(*bad)


# -- the paper protocol: visioneval's rule (docs/mmvp.md, "Reading the paper's answers") ----

@pytest.mark.parametrize("text, q, letter, how", [
    ("(a)", FEET, "a", "letter"),
    ("A.", FEET, "a", "letter"),
    ("(b) No, the feet are hidden.", FEET, "b", "letter"),
    ("The answer is (b).", FEET, "b", "stated letter"),
    ("I think the answer is A, because the feet rest on the stem", FEET, "a", "stated letter"),
    ("Yes, but only two of them.", FEET, "a", "option text"),
    ("No, the feet are not visible; yes, the wings are.", FEET, "b",
     "option text the reply begins with"),
    ("The person is standing on the gravel path.", PATH, "b", "option text"),
    ("OK/SELECT", BUTTON, "a", "option text"),  # "OK" inside "OK/SELECT" does not count
    ("The button says OK.", BUTTON, "b", "option text"),
    ("Happy Easter!", EASTER, "b", "option text"),
    ('It says "Happy Easter" without punctuation.', EASTER, "a", "option text"),
    ("Incorrect.", DAISY, "b", "option text"),  # "Correct" inside "Incorrect" is no word
    ("(a) Yes or (b) No", FEET, None, AMBIGUOUS),
    ("The grass is beside the gravel path.", PATH, None, AMBIGUOUS),
    ("Both", FEET, None, UNPARSED),
    ("There is a dog in the picture.", FEET, None, UNPARSED),  # no article collision
    ("the answer is a dog", FEET, None, UNPARSED),
    ("", FEET, None, UNPARSED),
    (REFUSAL, FEET, None, UNPARSED),
])
def test_paper_reading(text, q, letter, how):
    assert readings.paper(text, q) == readings.Reading(letter, how)


# -- lmms-eval: _extract_answer_letter, utils.py lines 32-67 -----------------------------------

@pytest.mark.parametrize("text, letter", [
    ("(a)", "A"),  # pattern 1 (line 51): the letter alone, brackets and case ignored
    ("A.", "A"),  # pattern 1
    ("(b) No", "B"),  # pattern 2 (line 52): a letter at the start, then a space
    ("The answer is B", "B"),  # pattern 3 (line 53)
    ("I choose option (b) here", "B"),  # pattern 4 (line 54)
    ("There is a dog", "A"),  # pattern 5 (line 55): the article "a" before a space
    ("camera", "A"),  # pattern 5: a word ending in "a" at the end of the text
    ("Both", "B"),  # no pattern; the first character is B (lines 64-65)
    ("Yes, but the feet are hidden", ""),  # no a/b before a space, first character Y
    (REFUSAL, ""),
    ("", ""),
])
def test_lmms_eval_letter(text, letter):
    assert readings.lmms_eval(text) == letter


# -- VLMEvalKit: can_infer, matching_util.py lines 18-127 ---------------------------------------

@pytest.mark.parametrize("text, found", [
    ("A.", "A"),  # one option letter among the last tokens (lines 39-53)
    ("The answer is B.", "B"),
    ("A dog is there", "A"),  # the article "A" is a token: counted as option A
    ("A dog is on the flower", None),  # ... but only among the last four tokens (line 52)
    ("I think the answer is A, because the feet rest clearly on the stem of it", "A"),
    # ... the letter is not among the last four tokens: the "answer is" regex (lines 57-59)
    ("Yes", "A"),  # can_infer_text (lines 107-121): one option's text in a short answer
    ("No", "B"),
    ("(a)", None),  # the brackets go, "a" is no option letter (case counts), no text: judge
    ("Yes, but the feet are hidden", None),  # longer than twice the options' text: judge
    ("Both", None),
    ("", None),
    (REFUSAL, "Z"),  # a refusal it knows (lines 24-30)
])
def test_vlmevalkit_option(text, found):
    assert readings.vlmevalkit(text, FEET) == found


def test_thinking_is_set_aside_before_any_reading():
    # The engine splits a reasoning model's reply first (backends/reasoning.py): what is
    # read is the answer after </think>, as lmms-eval's and VLMEvalKit's own splitters do.
    reply = "<think>Is it (a) or (b)? The feet look hidden, so a no.</think>\n(b) No"
    answer = split(reply).answer
    assert answer == "(b) No"
    assert readings.paper(answer, FEET).letter == "b"
    assert readings.lmms_eval(answer) == "B"
    assert readings.vlmevalkit(answer, FEET) == "B"
    # Read whole, the thinking would decide: lmms-eval's pattern 5 finds "(a)" first.
    assert readings.lmms_eval(reply) == "A"


# -- one answer, every protocol and label set --------------------------------------------------

def test_score_blocks_with_the_counterfactuals_of_the_paper_answer():
    labels = Labels(published="a", lmms_eval="b", corrected="b")  # as Index 99 in lmms-eval
    parsed, scores = score("paper", "(a) Long", FEET, labels, ["paper", "lmms-eval",
                                                               "vlmevalkit"])
    assert parsed == {"paper": "(a)", "paper_reading": "letter"}
    assert verdicts(scores["paper"]) == {"correct": 1.0}
    assert scores["paper"]["lmms-eval|label set"] == 0.0  # (a) against lmms-eval's (b)
    assert scores["paper"]["lmms-eval|extraction"] == 0.0  # its regex reads A, label B
    assert scores["paper"]["vlmevalkit|extraction"] == 0.0  # "a" is no option letter
    assert "vlmevalkit|label set" not in scores["paper"]  # its labels are the paper's
    assert scores["paper/corrected"] == {"correct": 0.0}
    parsed, scores = score("lmms-eval", "B", FEET, labels, ["lmms-eval"])
    assert parsed == {"lmms-eval": "B"}
    assert scores == {"lmms-eval": {"correct": 1.0}, "lmms-eval/corrected": {"correct": 1.0}}
    parsed, scores = score("vlmevalkit", "Both of them", FEET, labels, ["vlmevalkit"])
    assert parsed == {"vlmevalkit": ""}
    assert scores == {"vlmevalkit": {"correct": 0.0}, "vlmevalkit/corrected": {"correct": 0.0}}
