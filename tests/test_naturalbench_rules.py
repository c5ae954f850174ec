"""NaturalBench's rules against the reference code: the prompts, the answer extraction on
hand-made answers (each verdict worked out from the reference's `extract_answer`), the
answer columns, and the four figures equal to `get_scores` on whole groups.

References: [R] Baiqi-Li/NaturalBench at 99676059, naturalbench_vqa.py; [L] lmms-eval at
75571cfe, lmms_eval/tasks/naturalbench/utils.py; [V] VLMEvalKit at e8e78f05,
vlmeval/dataset/utils/naturalbench.py and vlmeval/dataset/image_mcq.py."""

from __future__ import annotations

import itertools
import random

import pytest

from visioneval.benchmarks.naturalbench.metrics import _figures
from visioneval.benchmarks.naturalbench.protocols import extract_answer, prompt, read_label
from visioneval.benchmarks.naturalbench.spec import FIXED_LAYOUT, ITEM_NAMES

# (answer, expected code). [R] lines 25-48 (= [L] 122-145 = [V] 20-43): the first whole-word
# case-insensitive match of each word (`\b` word `\b`, re.IGNORECASE); both found: the
# earlier wins; one found: it; none: -1.
YES_NO = [
    ("Yes", 1), ("no.", 0), ("YES", 1),
    ("Yes, but the dog is small.", 1),  # "yes" at 0, no "no": 1
    ("There is no dog, yes.", 0),  # "no" (9) before "yes" (17)
    ("I cannot tell.", -1),  # "no" inside "cannot" is not a whole word
    ("Nope", -1), ("", -1),
    ("I'm sorry, I can't help with that.", -1),  # a refusal names neither
    ("This is a yes-no question: no", 1),  # "yes" (10) before "no" (14): hyphens are bounds
    # A reasoning model's block, read raw as the reference reads it: "yes" comes first.
    # visioneval's own runs set the block aside before scoring (backends/reasoning.py).
    ("<think>Maybe yes. Looking again, no.</think>No", 1),
]
MULTIPLE_CHOICE = [
    ("A", 1), ("B", 0), ("(a)", 1), ("A.", 1), ("b)", 0),
    ("There is a dog, so B", 1),  # the article "a" (9) is option A
    ("Both", -1), ("", -1),
    ("Option B: Helmet", 0),  # no whole-word A
    ("The answer is B", 0),  # "answer" holds no whole-word "a"
    ("B, not A", 0),
    ("I'm sorry, I can't answer.", -1),
]


@pytest.mark.parametrize("text,code", YES_NO)
def test_yes_no_answers_read_as_the_reference_reads_them(text, code):
    assert extract_answer(text, "yes_no") == code


@pytest.mark.parametrize("text,code", MULTIPLE_CHOICE)
def test_letters_read_as_the_reference_reads_them(text, code):
    assert extract_answer(text, "multiple_choice") == code


def test_the_paper_glues_the_suffix_and_the_harnesses_put_a_space():
    # [R] line 158: item["Question_0"] + SUFFIX_FOR_VQA[...]; [L] utils.py:155 question + " "
    # + suffix; [V] image_mcq.py:1407 f'{question} {SUFFIX_FOR_VQA[line["type"]]}'.
    assert prompt("Is it red?", "yes_no", "paper") == "Is it red?Please answer Yes or No."
    assert prompt("Is it red?", "yes_no", "spaced") == "Is it red? Please answer Yes or No."
    mc = "What colour?\nOption: A:red; B:blue;"
    assert prompt(mc, "multiple_choice", "paper") == \
        mc + "Please output the letter corresponding to the correct option."
    assert prompt(mc, "multiple_choice", "spaced").endswith("; Please output the letter "
                                                            "corresponding to the correct "
                                                            "option.")


@pytest.mark.parametrize("cell,qtype,code", [
    ("Yes", "yes_no", 1), ("no", "yes_no", 0), (" No.", "yes_no", 0), ("A", "yes_no", None),
    ("A", "multiple_choice", 1), ("(B)", "multiple_choice", 0), ("b", "multiple_choice", 0),
    ("Yes", "multiple_choice", None), ("maybe", "yes_no", None), (None, "yes_no", None)])
def test_answer_columns(cell, qtype, code):
    assert read_label(cell, qtype) == code


def reference_scores(groups: list[list[int]]) -> dict[str, float]:
    """The reference's four figures ([R] lines 79-147), worked from its description: with
    extracted codes per group in the order q0_i0, q0_i1, q1_i0, q1_i1, a question counts
    when q0_i0 == 1 and q0_i1 == 0 (q1: q1_i1 == 1 and q1_i0 == 0), an image when q0_i0 ==
    1 and q1_i0 == 0 (i1: q1_i1 == 1 and q0_i1 == 0), an answer when it equals 1, 0, 0, 1,
    a group when both questions and both images count."""
    q = sum((g[0] == 1 and g[1] == 0) + (g[3] == 1 and g[2] == 0) for g in groups)
    i = sum((g[0] == 1 and g[2] == 0) + (g[3] == 1 and g[1] == 0) for g in groups)
    a = sum((g[0] == 1) + (g[1] == 0) + (g[2] == 0) + (g[3] == 1) for g in groups)
    g_ = sum((g[0] == 1 and g[1] == 0 and g[3] == 1 and g[2] == 0) for g in groups)
    n = len(groups)
    return {"q_acc": q / (2 * n), "i_acc": i / (2 * n), "acc": a / (4 * n), "g_acc": g_ / n}


def test_the_four_figures_are_get_scores_on_whole_groups():
    rng = random.Random(5)
    codes = [[rng.choice((1, 0, -1)) for _ in range(4)] for _ in range(300)]
    codes += [list(c) for c in itertools.product((1, 0, -1), repeat=4)]  # every pattern
    verdicts = {f"{k:04d}": [float(c == FIXED_LAYOUT[item]) for c, item in
                             zip(group, ITEM_NAMES, strict=True)]
                for k, group in enumerate(codes)}
    mine = _figures(verdicts, intervals=False)
    expected = reference_scores(codes)
    for metric, value in expected.items():
        assert mine[metric] == pytest.approx(value, abs=1e-12), metric
    assert mine["n_groups"] == len(codes) and mine["incomplete_groups"] == 0


def test_an_unscored_answer_leaves_its_units_out_never_counts_as_wrong():
    verdicts = {"0000": [1.0, 1.0, None, 1.0], "0001": [1.0, 1.0, 1.0, 1.0]}
    found = _figures(verdicts, intervals=True)
    assert (found["n_items"], found["acc"]) == (7, 1.0)
    assert (found["n_questions"], found["n_images"], found["n_groups"]) == (3, 3, 1)
    assert found["g_acc"] == 1.0 and found["incomplete_groups"] == 1
    assert found["g_acc_ci95_unavailable"]  # one whole group: no interval
    assert found["acc_ci95_clusters"] == "group" and found["acc_ci95_n_clusters"] == 2
