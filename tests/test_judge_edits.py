"""Rule-based edits of a candidate answer for checking a rubric judge (evaluators.edits):
each kind on realistic descriptions, where a rule does not apply, the reference answer's
preference, the markers, `named` against verdict details, determinism and odd strings."""

from __future__ import annotations

import json
import re

import pytest

from visioneval.evaluators.edits import KINDS, OBJECTS, Edit, make_edit, named

DESK = "Two people sit at a wooden desk; a potted plant stands on the right."
SHELF = "I count 5 bottles and 3 cans."
SHAPES = "Three red circles and a blue square."
ROOM = "A dog lies on a rug. A lamp stands in the corner. The walls are white."


def edit(kind, output, reference="", task=""):
    found = make_edit(kind, output, reference, task)
    assert found is not None, f"{kind} did not apply to {output!r}"
    return found


# --- count ----------------------------------------------------------------------------------

def test_count_raises_the_first_count_by_one_in_words_keeping_case():
    found = edit("count", DESK)
    assert found.output == "Three people sit at a wooden desk; a potted plant stands on the right."
    assert found.change == 'count: "Two people" -> "Three people"'
    assert found.markers == ("three", "3", "people", "person")
    assert found.detail == "hallucinations" and found.kind == "count"


def test_count_digits_stay_digits():
    found = edit("count", SHELF)
    assert found.output == "I count 6 bottles and 3 cans."
    assert found.markers == ("6", "six", "bottles", "bottle")


def test_count_prefers_the_count_the_reference_confirms():
    found = edit("count", SHELF, reference="There are 4 bottles and 3 cans.")
    assert found.output == "I count 5 bottles and 4 cans."
    # "can", the singular, is a modal verb: a judge's "the answer can ..." must not count
    assert found.markers == ("4", "four", "cans")


def test_count_prefers_the_same_noun_over_the_same_number_alone():
    output = "Two cups stand next to two plates."
    assert edit("count", output).output == "Three cups stand next to two plates."
    found = edit("count", output, reference="The table holds 2 plates and 4 cups.")
    assert found.output == "Two cups stand next to three plates."


def test_count_skips_colours_and_adjectives_to_the_noun():
    found = edit("count", SHAPES)
    assert found.output == "Four red circles and a blue square."
    assert found.markers == ("four", "4", "circles", "circle")
    assert edit("count", "We see 2 large wooden tables.").markers == ("3", "three", "tables",
                                                                      "table")


def test_count_capitals_and_plural():
    assert edit("count", "THREE CUPS ON A TRAY.").output == "FOUR CUPS ON A TRAY."
    assert edit("count", "One red circle.").output == "Two red circles."
    assert edit("count", "One child and a man.").output == "Two children and a man."
    assert edit("count", "Nine apples.").output == "Ten apples."
    assert edit("count", "9 apples.").output == "10 apples."
    twenty = edit("count", "Twenty geese fly over a lake.")
    assert twenty.output == "Twenty-one geese fly over a lake."
    assert twenty.markers[:2] == ("twenty-one", "21")


@pytest.mark.parametrize("output", [
    "A cat sleeps on a sofa.",
    "In image 2 the car is red.",          # a label, not a count
    "The ruler reads 3.5 cm at 10:30.",     # a decimal and a time
    "A 3-year-old child plays.",            # an age
    "The photo was taken in 2019.",         # a year
    "It costs $5.",                         # a price
    "1. A cup\n2. A plate",                 # list numbers
    "The one on the left is taller.",       # the pronoun "one"
    "A glass of water, 50% full.",
])
def test_count_does_not_apply_without_a_count(output):
    assert make_edit("count", output) is None


def test_count_in_a_list_item_and_a_bare_answer():
    assert edit("count", "- a cup\n- 3 forks").output == "- a cup\n- 4 forks"
    assert edit("count", "5").output == "6"


# --- object ---------------------------------------------------------------------------------

def test_object_appends_one_sentence_about_an_absent_object():
    found = edit("object", DESK)
    added = found.output[len(DESK):]
    name = next(n for n, sentence in OBJECTS.items() if added == " " + sentence)
    assert found.markers[0] == name and name.split()[-1] in found.markers
    assert found.change == f'object: added "{OBJECTS[name]}"'
    assert found.detail == "hallucinations"


def test_object_is_none_mentioned_in_the_output_reference_or_task():
    first = edit("object", DESK).markers[0]
    second = edit("object", DESK, reference=f"Two people and a {first}.").markers[0]
    third = edit("object", DESK, reference=f"A {first}.", task=f"Is there a {second}s?")
    assert len({first, second, third.markers[0]}) == 3
    # a head noun counts as a mention: "a bear" rules out the teddy bear
    all_but_teddy = " ".join(n for n in OBJECTS if n != "teddy bear")
    assert make_edit("object", "A bear in a zoo.", reference=all_but_teddy) is None
    assert edit("object", "A cat.", reference=all_but_teddy).markers == ("teddy bear", "bear",
                                                                         "bears")


def test_object_order_depends_on_the_output():
    outputs = [f"A kitchen with {n} chairs." for n in range(2, 12)]
    assert len({edit("object", o).markers[0] for o in outputs}) >= 3


def test_object_adds_a_full_stop_or_a_list_item():
    assert edit("object", "A cat on a sofa").output.startswith("A cat on a sofa. A")
    numbered = edit("object", "1. A cup\n2. A plate\n").output
    assert re.fullmatch(r"1\. A cup\n2\. A plate\n3\. An? [a-z ]+ in the [a-z ]+\.\n", numbered)
    assert edit("object", "- a cup\n- a plate").output.split("\n")[2].startswith("- A")


# --- missing --------------------------------------------------------------------------------

def test_missing_drops_the_clause_the_reference_confirms():
    found = edit("missing", DESK, reference="A potted plant on the right of a desk.")
    assert found.output == "Two people sit at a wooden desk."
    assert found.markers == ("potted", "plant", "plants")
    assert found.detail == "missing_elements"
    other = edit("missing", DESK, reference="Two people at a wooden desk.")
    assert other.output == "A potted plant stands on the right."  # capitalised
    assert other.markers == ("people", "person", "wooden", "desk", "desks")


def test_missing_drops_a_whole_sentence_when_there_are_several():
    found = edit("missing", ROOM, reference="A lamp in the corner of a room.")
    assert found.output == "A dog lies on a rug. The walls are white."
    assert found.markers == ("lamp", "lamps")
    unreferenced = edit("missing", ROOM)
    assert unreferenced.output.count(".") == 2 and unreferenced.output in {
        "A lamp stands in the corner. The walls are white.",
        "A dog lies on a rug. The walls are white.",
        "A dog lies on a rug. A lamp stands in the corner."}


def test_missing_splits_at_and_keeping_the_full_stop():
    found = edit("missing", SHAPES, reference="A blue square.")
    assert found.output == "Three red circles."
    assert found.markers == ("square", "squares")  # no number or colour words


@pytest.mark.parametrize("output", [
    "A cat.",
    "A black and white cat sits on a mat.",  # "a black" is no clause
    "Sure! A cat sleeps on a sofa.",          # one sentence of content, no clauses
    "   ",
])
def test_missing_does_not_apply_when_nothing_can_go(output):
    assert make_edit("missing", output) is None


def test_missing_keeps_list_numbers_and_abbreviations_with_their_item():
    assert edit("missing", "1. A cup\n2. A plate").output in {"1. A cup", "2. A plate"}
    assert edit("missing", "Tools, e.g. a hammer. A saw.").output in {"A saw.",
                                                                      "Tools, e.g. a hammer."}


# --- colour ---------------------------------------------------------------------------------

def test_colour_replaces_the_first_colour_with_its_contrast():
    found = edit("colour", SHAPES)
    assert found.output == "Three green circles and a blue square."
    assert found.change == 'colour: "red circles" -> "green circles"'
    assert found.markers == ("green", "circles", "circle")
    assert found.detail == "hallucinations"


def test_colour_prefers_the_reference_and_fixes_the_article():
    found = edit("colour", SHAPES, reference="A blue square beside circles.")
    assert found.output == "Three red circles and an orange square."
    assert found.markers == ("orange", "square", "squares")


def test_colour_keeps_case_and_avoids_a_colour_already_used():
    assert edit("colour", "RED BALLOONS.").output == "GREEN BALLOONS."
    assert edit("colour", "Red apples lie on grass.").output == "Green apples lie on grass."
    assert edit("colour", "A red apple beside a green leaf.").output == \
        "A blue apple beside a green leaf."
    assert edit("colour", "The car is grey.").markers == ("yellow",)


@pytest.mark.parametrize("output", ["A cat sleeps on a sofa.", "Reduced contrast, bluish tint.",
                                    "An orange sits on the table.", "A red-brown cat."])
def test_colour_does_not_apply_without_a_colour_word(output):
    assert make_edit("colour", output) is None


# --- structured answers ---------------------------------------------------------------------

def test_json_answers_are_edited_in_their_values_and_stay_json():
    answer = json.dumps({"people_count": 2, "objects": ["cup", "red mug"]})
    count = edit("count", answer)
    assert json.loads(count.output)["people_count"] == 3
    assert count.markers == ("3", "three", "people", "person")
    obj = edit("object", answer)
    assert json.loads(obj.output)["objects"] == ["cup", "red mug", obj.markers[0]]
    missing = json.loads(edit("missing", answer, reference="a red mug").output)
    assert missing["objects"] == ["cup"]
    colour = edit("colour", answer)
    assert json.loads(colour.output)["objects"] == ["cup", "green mug"]


def test_fenced_json_keeps_its_fence_and_layout():
    answer = '```json\n{\n  "shape": "circle",\n  "color": "blue"\n}\n```'
    found = edit("colour", answer)
    assert found.output == '```json\n{\n  "shape": "circle",\n  "color": "orange"\n}\n```'
    assert make_edit("count", answer) is None  # no count in it
    assert make_edit("missing", answer) is None  # no list, no sentence to drop


def test_json_with_nothing_to_edit_gives_none():
    for kind in KINDS:
        assert make_edit(kind, '{"x": [0.5, 1.5], "id": 7}') is None
    assert make_edit("count", '{"bbox": [10, 20, 30, 40]}') is None  # coordinates


# --- named ----------------------------------------------------------------------------------

def test_named_finds_a_marker_in_string_and_dict_items():
    found = edit("count", DESK)
    assert named(found, {"hallucinations": ["The description says THREE people; there are two."]})
    assert named(found, {"hallucinations": [{"claim": "3 persons", "seen": 2}]})
    assert named(found, {"hallucinations": "three people"})  # one item, not a list
    assert not named(found, {"hallucinations": ["The desk is metal, not wooden."]})


def test_named_reads_only_the_edits_detail_list():
    found = edit("missing", DESK, reference="A potted plant on the right of a desk.")
    assert named(found, {"missing_elements": ["the potted plant on the right"]})
    assert not named(found, {"hallucinations": ["the potted plant on the right"],
                             "missing_elements": []})
    assert not named(found, {})


def test_named_matches_whole_words_only():
    red = Edit("colour", "A red car.", 'colour: "green car" -> "red car"', ("red",),
               "hallucinations")
    assert not named(red, {"hallucinations": ["reduced contrast", "a bored driver"]})
    assert named(red, {"hallucinations": ["the car is not RED"]})
    teddy = Edit("object", "", "", ("teddy bear",), "hallucinations")
    assert named(teddy, {"hallucinations": ["a teddy\nbear"]})
    assert not named(teddy, {"hallucinations": ["a teddy-bearish shape"]})


def test_as_dict_is_json_ready():
    found = edit("colour", SHAPES)
    data = json.loads(json.dumps(found.as_dict()))
    assert data == {"kind": "colour", "change": found.change, "markers": list(found.markers),
                    "detail": "hallucinations", "output": found.output}


# --- determinism and odd strings ------------------------------------------------------------

def test_the_same_output_always_gets_the_same_edit():
    for kind in KINDS:
        for output in (DESK, SHELF, SHAPES, ROOM):
            assert make_edit(kind, output, "a reference") == make_edit(kind, output,
                                                                       "a reference")


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown edit kind 'size'"):
        make_edit("size", DESK)  # type: ignore[arg-type]


ODD = ["", " ", "\n\n\t", "ü", "\ud800 two cats", "\x00", "{", "[1,2", "{}", "[]",
       "[" * 3000 + "]" * 3000, '{"a":' * 3000, "1" * 10_000, "one " * 5000, "red " * 5000,
       "." * 20_000, "!" * 20_000, "a, and b", " and ", "; ;", "```json\n```", "```",
       "```json\n" + " \n" * 20_000, "twenty-one", "١٢٣ apples", "🦒 two 🦓 and a red 🚗",
       '{"n": NaN, "count": 3}', '{"n": 1e400}', '{"n": ' + "9" * 5000 + "}",
       "שלום two cats", "a" + " " * 50_000 + "b. c", "Two people. " * 5000, "e.g. e.g.",
       "1.\n2.\n3.", "- \n- \n-", '[[["two cats", "a red car"]]]', '{"count": true}',
       "ß two STRASSE", "RED", "5.5 kg", "#3", "3/4"]


@pytest.mark.parametrize("kind", KINDS)
def test_odd_strings_never_raise_and_any_edit_is_whole(kind):
    for output in ODD:
        found = make_edit(kind, output, reference=output[:500], task="Describe the image.")
        if found is None:
            continue
        assert found.kind == kind and found.output != output and found.markers
        json.dumps(found.as_dict())
        assert named(found, {found.detail: [" ".join(found.markers)]})


def test_a_count_the_reference_contradicts_is_not_raised():
    """"Three people" against a reference of two is wrong already: raising it would not
    make a right statement wrong, so another count is taken, or none."""
    only_wrong = make_edit("count", "Three people sit at a desk.", "Two people at a desk.")
    assert only_wrong is None
    found = make_edit("count", "Three people sit at two desks.", "Two people at two desks.")
    assert found is not None and "three desks" in found.output.lower()
