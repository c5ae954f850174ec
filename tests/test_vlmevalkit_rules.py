"""VLMEvalKit's shared answer-reading rules on hand-made answers. Each expected verdict is
worked out from VLMEvalKit's code at e8e78f05 (open-compass/VLMEvalKit): file and line
named beside each case."""

from __future__ import annotations

import pytest

from visioneval.harness.vlmevalkit import (
    option,
    option_without_judge,
    process_punctuation,
    split_thinking,
    yes_no,
)

YORN = "vlmeval/dataset/utils/yorn.py:254-261"
PUNCT = "vlmeval/smp/misc.py:18-33"
MATCH = "vlmeval/utils/matching_util.py"

YES_NO_CASES = [
    # (answer, verdict, why)
    ("Yes, but only partly.", "Yes", f"{PUNCT}:28 ', ' deletes the comma, :32 the period"),
    ("Yes, but...", "Yes", f"{PUNCT}:32 the trailing periods go"),
    ("no.", "No", f"{PUNCT}:26 a period not next to a digit goes"),
    ("YES!", "Yes", f"{YORN}:255 lower-cased; {PUNCT}:31 '!' becomes a space"),
    ("both", "Unknown", f"{YORN}:261 neither word"),
    ("", "Unknown", f"{YORN}:261 no words"),
    ("I cannot answer", "Unknown", f"{YORN}:261"),
    ("Not sure", "Unknown", f"{YORN}:256 whole words: 'not' is not 'no'"),
    ("there is a dog", "Unknown", f"{YORN}:261"),
    ("Yes and no", "Unknown", f"{YORN}:257-260 both words"),
    ("**Yes**", "Unknown", f"{PUNCT}:21-24 '*' is no mark, the word is '**yes**'"),
    ("Yes: a dog", "Unknown", f"{PUNCT}:21-24 ':' is no mark, the word is 'yes:'"),
    ("(yes)", "Yes", f"{PUNCT}:31 brackets become spaces"),
    ("dog,yes", "Yes", f"{PUNCT}:31 a comma touching no space becomes a space"),
    ("dog,yes, clearly", "Unknown", f"{PUNCT}:28 ', ' elsewhere deletes every comma: 'dogyes'"),
    ("1000-yes", "Yes", f"{PUNCT}:31 '-' becomes a space"),
    ("1,000-yes", "Unknown", f"{PUNCT}:25,28 a digit-comma-digit deletes every mark: '1000yes'"),
    ("." * 32 + "yes", "Yes", f"{PUNCT}:32 32 periods removed"),
    ("." * 33 + "yes", "Unknown", f"{PUNCT}:32 re.UNICODE is sub's count: the 33rd stays"),
    ("<think>Could it be no? Looking again, yes.</think>Yes", "Unknown",
     f"{YORN}:256 the whole text is read, thinking included: both words"),
]


@pytest.mark.parametrize(("answer", "verdict", "why"), YES_NO_CASES,
                         ids=[case[0][:24] or "empty" for case in YES_NO_CASES])
def test_yes_no_reads_as_yorn_extraction(answer: str, verdict: str, why: str) -> None:
    assert yes_no(answer) == verdict, why


def test_punctuation_is_deleted_or_spaced_by_the_text_as_given() -> None:
    """misc.py:28 tests the original text: '/' touches no space, '?' does."""
    assert process_punctuation("yes/no? maybe") == "yes no maybe"
    assert process_punctuation("3.5 apples.") == "3.5 apples"


OPEN_CLOSED = {"A": "Open", "B": "Closed"}  # MMVP's two options: texts 10 long, limit 20
YES_NO_OPTIONS = {"A": "Yes", "B": "No"}  # texts 5 long, limit 10

OPTION_CASES = [
    # (answer, choices, letter, why)
    ("A.", OPEN_CLOSED, "A", f"{MATCH}:40 '.' becomes a space, 'A' is a token"),
    ("(A)", OPEN_CLOSED, "A", f"{MATCH}:40"),
    ("(a)", OPEN_CLOSED, None, f"{MATCH}:35 letters match case-sensitively; 109-121 no text"),
    ("a", OPEN_CLOSED, None, f"{MATCH}:35, 117"),
    ("The answer is B", OPEN_CLOSED, "B", f"{MATCH}:52 'B' among the last 4 tokens"),
    ("both", OPEN_CLOSED, None, f"{MATCH}:119 no option's text in the answer"),
    ("", OPEN_CLOSED, None, f"{MATCH}:61, 121"),
    ("I cannot answer", OPEN_CLOSED, None, f"{MATCH}:24-27 not a listed refusal"),
    ("Cannot determine the answer from the image.", OPEN_CLOSED, "Z", f"{MATCH}:26,29-30"),
    ("cannot determine the answer", OPEN_CLOSED, None,
     f"{MATCH}:29 refusals match case-sensitively; 109 answer longer than 20"),
    ("I'm sorry, but without the image provided I can't say.", OPEN_CLOSED, "Z",
     f"{MATCH}:26"),
    ("Z", OPEN_CLOSED, "Z", f"{MATCH}:54-55 no letter, a 'Z' token"),
    ("B is right since the door is shut tight", OPEN_CLOSED, None,
     f"{MATCH}:52 'B' is not among the last 4 tokens; 109 too long for text"),
    ("I think the answer is B since the door is shut tight", OPEN_CLOSED, "B",
     f"{MATCH}:15,57-59 'answer is B' rescues an early letter"),
    ("The answer is because it is closed", OPEN_CLOSED, "B",
     f"{MATCH}:15 case-insensitive, nothing after the letter: 'answer is b(ecause)'"),
    ("A or B", OPEN_CLOSED, None, f"{MATCH}:47 two letters; 119 no text"),
    ("Open", OPEN_CLOSED, "A", f"{MATCH}:117 option text in the answer"),
    ("open, not closed", OPEN_CLOSED, None, f"{MATCH}:119 two option texts"),
    ("The door is clearly open", OPEN_CLOSED, None, f"{MATCH}:109 24 > 2 * 10"),
    ("<think>Not A.</think>B", OPEN_CLOSED, "A",
     f"{MATCH}:44,52 'A' is a token, 'B' is glued to '</think>'"),
    ("Failed to obtain answer via API", OPEN_CLOSED, None, f"{MATCH}:21-22, 109"),
    ("Not sure", YES_NO_OPTIONS, "B", f"{MATCH}:117 'no' is a substring of 'not sure'"),
    ("no.", YES_NO_OPTIONS, "B", f"{MATCH}:108,117 lower-cased text match"),
    ("YES!", YES_NO_OPTIONS, "A", f"{MATCH}:108,117"),
    ("Yes, but no", YES_NO_OPTIONS, None, f"{MATCH}:109 11 > 10"),
    ("there is a dog", YES_NO_OPTIONS, None, f"{MATCH}:109"),
]


@pytest.mark.parametrize(("answer", "choices", "letter", "why"), OPTION_CASES,
                         ids=[case[0][:24] or "empty" for case in OPTION_CASES])
def test_option_reads_as_can_infer(
    answer: str, choices: dict[str, str], letter: str | None, why: str
) -> None:
    assert option(answer, choices) == letter, why


def test_exact_matching_records_z_when_nothing_is_inferred() -> None:
    """multiple_choice.py:380-383: no judge, no letter -> 'Z'."""
    assert option_without_judge("both", OPEN_CLOSED) == "Z"
    assert option_without_judge("(B)", OPEN_CLOSED) == "B"


def test_option_leaves_the_choices_as_given() -> None:
    """matching_util.py:114 lower-cases the caller's dict in place; ours does not."""
    choices = dict(OPEN_CLOSED)
    assert option("Closed", choices) == "B"
    assert choices == OPEN_CLOSED


def test_a_key_that_is_not_a_letter_fails_where_vlmevalkit_asserts() -> None:
    """matching_util.py:113 asserts only once text matching is reached."""
    with pytest.raises(ValueError, match="'1'"):
        option("Open", {"1": "Open", "2": "Closed"})
    assert option("1", {"1": "Open", "2": "Closed"}) == "1"


def test_split_thinking_keeps_what_follows_the_last_closing_tag() -> None:
    """inference.py:255-268, used only when a run sets SPLIT_THINK."""
    answer, thinking = split_thinking("<think>Could it be no? Yes.</think>\nYes")
    assert (answer, thinking) == ("Yes", "Could it be no? Yes.")
    assert yes_no(answer) == "Yes"
    assert option(split_thinking("<think>Not A.</think>B")[0], OPEN_CLOSED) == "B"
    assert split_thinking("a</think>b</think> c ") == ("c", "a</think>b</think>")
    assert split_thinking(" <think>unclosed Yes ") == (" <think>unclosed Yes ", "")
