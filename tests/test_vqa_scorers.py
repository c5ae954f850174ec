"""The generic image-question benchmark's scorers: pure functions, the rules docs/vqa.md
writes down."""

from __future__ import annotations

import pytest

from visioneval.benchmarks.vqa import prompts
from visioneval.benchmarks.vqa.scorers import (
    choice,
    exact,
    extract_choice,
    first_number,
    label_set,
    labels,
    normalise,
    number,
    option_index,
    target_number,
)

OPTIONS = ["red", "blue", "dark red", "green"]


@pytest.mark.parametrize(("text", "expected"), [
    ("  The Red Circle. ", "red circle"),
    ("A cat!", "cat"),
    ("3.5", "3.5"),
    ("U.S.", "u.s"),
    ('"yes"', "yes"),
    ("Theatre", "theatre"),  # "the" only as a word
    ("an  apple  pie", "apple pie"),
    ("...", ""),
])
def test_normalise(text, expected):
    assert normalise(text) == expected


def test_exact_matches_after_normalising_and_accepts_any_listed_target():
    assert exact("The cat.", "cat").correct
    assert not exact("cats", "cat").correct
    assert exact("Kitten", ["cat", "kitten"]).correct
    verdict = exact("dog", "cat")
    assert (verdict.parsed, verdict.correct, verdict.unparsed) == ("dog", False, False)


def test_exact_empty_answer_is_unparsed_not_silently_wrong():
    verdict = exact("  . ", "cat")
    assert verdict.unparsed and not verdict.correct and verdict.parsed is None
    assert verdict.scores() == {"correct": 0.0, "unparsed": 1.0, "ambiguous": 0.0}


@pytest.mark.parametrize(("text", "expected"), [
    ("B", 1), ("b", 1), ("(B)", 1), ("B.", 1), ("[B]", 1), ("B)", 1), ("**B**", 1),
    ("Answer: B", 1), ("The answer is (C)", 2), ("the correct option is D", 3),
    ("ANSWER: C", 2), ("Answer: B. blue", 1),
    ("B. blue", 1), ("(B) blue", 1), ("B) blue", 1), ("B: blue", 1),
    ("blue", 1), ("Blue.", 1), ("dark red", 2), ("It is dark red.", 2),  # not also "red"
    ("I would pick (D) because it is greenish", 3),
    ("The answer is a dark red circle", 2),  # "a" is an article, not option A
])
def test_choice_extraction(text, expected):
    assert extract_choice(text, OPTIONS) == (expected, False)


@pytest.mark.parametrize("text", ["B or C", "A, B", "A/B", "red or blue", "(A) or (C)",
                                  "Answer: A. No wait, answer: C"])
def test_two_options_are_ambiguous(text):
    assert extract_choice(text, OPTIONS) == (None, True)
    verdict = choice(text, OPTIONS, 0)
    assert verdict.unparsed and verdict.ambiguous and not verdict.correct


@pytest.mark.parametrize("text", ["E", "The answer is E", "purple", "", "I cannot tell"])
def test_no_option_is_unparsed(text):
    assert extract_choice(text, OPTIONS) == (None, False)
    verdict = choice(text, OPTIONS, 1)
    assert verdict.unparsed and not verdict.ambiguous and not verdict.correct


def test_choice_verdict_names_the_letter():
    right, wrong = choice("Answer: B", OPTIONS, 1), choice("green", OPTIONS, 1)
    assert (right.parsed, right.correct, right.unparsed) == ("B", True, False)
    assert (wrong.parsed, wrong.correct) == ("D", False)


@pytest.mark.parametrize(("target", "expected"), [
    ("B", 1), ("b", 1), ("(C)", 2), ("blue", 1), ("Dark Red", 2), (3, 3), (0, 0),
    ("E", None), (7, None), ("purple", None), (True, None),
])
def test_option_index_of_a_target(target, expected):
    assert option_index(target, OPTIONS) == expected


def test_option_text_wins_over_a_letter_when_options_are_letters():
    assert option_index("B", ["A", "B"]) == 1 and option_index("A", ["B", "A"]) == 1


def test_set_scorer_exact_match_and_sample_f1():
    verdict, scores = label_set("Color, size.", "color,size")
    assert verdict.correct and verdict.parsed == ["color", "size"] and scores["exact_match"] == 1
    verdict, scores = label_set("color", ["color", "size"])
    assert not verdict.correct and 0.66 < scores["sample_f1"] < 0.67
    verdict, scores = label_set(" , ", "color")
    assert verdict.unparsed and scores == {"exact_match": 0.0, "sample_f1": 0.0}
    assert labels("The Cat, a dog,,") == {"cat", "dog"}


@pytest.mark.parametrize(("text", "expected"), [
    ("42", 42.0), ("There are 3 circles.", 3.0), ("1,234.5 apples", 1234.5), ("-3", -3.0),
    ("2e3", 2000.0), ("three", 3.0), ("I see Twelve of them", 12.0), ("1,2,3", 1.0),
    (".5", 0.5), ("x2 and 5", 5.0), ("none", None), ("", None),
])
def test_first_number(text, expected):
    assert first_number(text) == expected


def test_number_within_relative_tolerance():
    assert number("about 101", 100.0, 0.01).correct
    assert not number("102", 100.0, 0.01).correct
    assert number("3", 3.0, 0.0).correct
    assert number("0.004", 0.0, 0.01).correct and not number("0.2", 0.0, 0.01).correct
    verdict = number("no idea", 3.0, 0.01)
    assert verdict.unparsed and not verdict.correct
    assert target_number("7") == 7.0 and target_number(2) == 2.0
    assert target_number("many") is None and target_number(float("nan")) is None


def test_prompt_wording():
    tail = prompts.suffix("choice", None)
    assert prompts.text("What colour?", ["red", "blue"], tail) == (
        "What colour?\nA. red\nB. blue\n"
        "Answer with the option's letter from the given choices directly.")
    assert prompts.suffix("exact", None) == "" and prompts.suffix("choice", "") == ""
    assert prompts.text(" How many? ", [], prompts.suffix("number", "One number.")) == \
        "How many?\nOne number."
