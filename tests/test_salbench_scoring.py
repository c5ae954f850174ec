"""Parity with the reference rules (lmms-eval salbench utils.py, by the paper's author), on
worked examples computed by hand from those rules, and the lenient parser's promises."""

from __future__ import annotations

import pytest

from visioneval.benchmarks.salbench.parse import lenient_labels, strict_tokens, target_labels
from visioneval.benchmarks.salbench.spec import O3_CLASSES, P3_CLASSES
from visioneval.metrics.labelsets import sample_scores, summarize_parser


@pytest.mark.parametrize(("response", "expected"), [
    ("Color", {"color"}),
    ("[Color, Size]", {"color", "size"}),       # brackets stripped at the ends
    ("color, size ", {"color", "size"}),
    ("Color.", {"color."}),                     # no punctuation stripping
    (" [color]", {"[color"}),                   # "[" only stripped at the very start
    ("color and size", {"color and size"}),     # only commas split
    ("", {""}),                                 # never an empty set
    ("Orientation,\nColor", {"orientation", "color"}),
])
def test_strict_parser_is_the_reference_rule(response, expected):
    assert strict_tokens(response) == expected


def test_target_labels_lowercase_and_split():
    assert target_labels("Color, Shape, Pattern") == {"color", "shape", "pattern"}
    assert target_labels("size") == {"size"}


def test_sample_scores_follow_reference_guards():
    s = sample_scores({"color", "size"}, {"color"})
    assert s["exact_match"] == 0.0
    # P = 1/(2+1e-8), R = 1, F1 = 2PR/(P+R+1e-8)
    p = 1 / (2 + 1e-8)
    assert s["sample_f1"] == pytest.approx(2 * p / (p + 1 + 1e-8), abs=1e-12)
    assert sample_scores({"color."}, {"color"}) == {"exact_match": 0.0, "sample_f1": 0.0}


def test_macro_f1_pools_counts_per_class_and_averages_all_classes():
    gold = [{"color"}, {"size"}, {"orientation"}, {"color"}]
    pred = [{"color"}, {"color"}, {"orientation"}, {"size", "color"}]
    m = summarize_parser(list(zip(pred, gold, strict=True)), P3_CLASSES, n_errors=2)
    # color: tp 2, fp 1, fn 0 -> P 2/3, R 1, F1 0.8; size: tp 0 -> 0; orientation: 1.
    assert m["per_class"]["color"]["f1"] == pytest.approx(0.8, abs=1e-6)
    assert m["per_class"]["size"]["f1"] == pytest.approx(0.0, abs=1e-6)
    assert m["per_class"]["orientation"]["f1"] == pytest.approx(1.0, abs=1e-6)
    assert m["macro_f1"] == pytest.approx(0.6, abs=1e-6)
    assert m["exact_match"] == 0.5
    assert (m["n"], m["n_errors"], m["n_unparsed"]) == (4, 2, 0)
    assert m["per_class"]["size"]["support"] == 1 and m["per_class"]["size"]["predicted"] == 1


def test_o3_macro_counts_classes_without_support_as_zero():
    pairs = [({"color", "shape"}, {"color", "shape"}), ({"pattern"}, {"color"})]
    m = summarize_parser(pairs, O3_CLASSES, n_errors=0)
    # color: tp1 fn1 -> P1 R.5 F1 2/3; shape: 1; pattern: fp1 -> 0; four unused classes: 0.
    assert m["macro_f1"] == pytest.approx((2 / 3 + 1) / 7, abs=1e-6)
    assert m["exact_match"] == 0.5


def test_no_scored_samples_means_no_scores_not_zero():
    m = summarize_parser([], P3_CLASSES, n_errors=3)
    assert "macro_f1" not in m and "exact_match" not in m
    assert m["unavailable"] == "no scored samples (3 failed requests)"


def test_unparsed_counts_answers_without_any_class():
    pairs = [({"color."}, {"color"}), ({"color"}, {"color"}), ({"i cannot tell"}, {"size"})]
    assert summarize_parser(pairs, P3_CLASSES, 0)["n_unparsed"] == 2


@pytest.mark.parametrize(("response", "expected"), [
    ("Color.", {"color"}),
    ("**Colour**", {"color"}),
    ("The answer is: Orientation", {"orientation"}),
    ("color and size", {"color", "size"}),
    ("Orientation\nSize", {"orientation", "size"}),
    ("Color; Shape", {"color", "shape"}),
    ("colorful objects", set()),                 # never inside another word
    ("resize", set()),
    ("not color", set()),                        # negated
    ("It is not the size but the color.", {"color"}),
    ("Neither size nor orientation; it's color", {"color"}),
    ("Colors, Shapes", {"color", "shape"}),
    ("focus", set()),                            # not a P3 class
])
def test_lenient_parser(response, expected):
    assert lenient_labels(response, O3_CLASSES if "Shape" in response else P3_CLASSES) \
        == expected


@pytest.mark.parametrize(("response", "expected"), [
    # A negation after the class word: "X is not ...", "X isn't ...", "X does not ...".
    ("Color is not the difference; size is", {"size"}),
    ("The color isn't what differs, it is the size", {"size"}),
    ("Size does not differ. Orientation does.", {"orientation"}),
    ("Orientation doesn't matter here: color", {"color"}),
    ("Color was not changed; the shape was", {"shape"}),
    # Descriptive mentions: a class word naming where or which object, not how it differs.
    ("The different object is in the top-left location.", set()),
    ("The object in the top-left location is different in color", {"color"}),
    ("The odd one is at the bottom-right location and differs in orientation",
     {"orientation"}),
    ("The object at location given by this bounding box differs in shape", {"shape"}),
    ("All objects have the same color; the odd one differs in size", {"size"}),
    ("They share a similar shape but a different pattern", {"pattern"}),
    # Still answers.
    ("It differs in location", {"location"}),
    ("Location", {"location"}),
    ("Different in color and location", {"color", "location"}),
    ("It differs in the color", {"color"}),
    ("The object of a different color", {"color"}),
    ("Color, not size", {"color"}),
    ("color not size", {"color"}),
    ("Shape is different", {"shape"}),
    ("Its color is what’s different, not its size", {"color"}),
    ("They are not the same size", {"size"}),
    ("The same object is the one that differs in color", {"color"}),
    ("The color is not the same as the others", {"color"}),
])
def test_lenient_parser_negations_after_and_descriptive_mentions(response, expected):
    assert lenient_labels(response, O3_CLASSES) == expected
