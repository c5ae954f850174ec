"""POPE's three readings of one answer, each worked out from its reference code:

- paper: AoiDragon/POPE evaluate.py lines 12-21 at 3df3ba1 (text before the first ".",
  commas deleted, split on " ", "No"/"not"/"no" as a word -> no, else yes);
- lmms-eval: lmms_eval/tasks/pope/utils.py lines 17-21 at 75571cf (lowercased and stripped,
  right only when it is the label) and lines 39-65 (precision and recall count only exact
  "yes"/"no");
- VLMEvalKit: vlmeval/dataset/utils/yorn.py `YOrN_Extraction` lines 254-261 with
  vlmeval/smp/misc.py `process_punctuation` lines 18-33 at e8e78f0; yorn.py line 164
  (Unknown is "no" in the counts), image_yorn.py line 91 (right = extracted == answer).

Then the metrics of hand-made answer sets against the paper's formulas, the labels RePOPE
corrects, and the prompts."""

from __future__ import annotations

import pytest

from visioneval.backends import reasoning
from visioneval.benchmarks.pope import protocols
from visioneval.benchmarks.pope.benchmark import prompt
from visioneval.benchmarks.pope.counts import Counts
from visioneval.benchmarks.pope.labels import Corrected, corrected
from visioneval.benchmarks.pope.options import PopeOptions, choose_settings
from visioneval.benchmarks.pope.scoring import score

# answer -> (paper's reading, lmms-eval's reading, VLMEvalKit's reading)
CASES = {
    "Yes": ("yes", "yes", "Yes"),
    "No": ("no", "no", "No"),
    "yes": ("yes", "yes", "Yes"),
    "no": ("no", "no", "No"),
    # evaluate.py keeps the words "No", "not", "no" only: "NO" is read yes.
    "NO": ("yes", "no", "No"),
    # The text before the first "." is "No"; lmms-eval compares "no." with "no".
    "No.": ("no", "no.", "No"),
    "Yes.": ("yes", "yes.", "Yes"),
    # Commas are deleted before the split: the words are "Yes" "but" ...
    "Yes, but it is small.": ("yes", "yes, but it is small.", "Yes"),
    "Yes, there is no dog in the picture.": ("no", "yes, there is no dog in the picture.",
                                             "Unknown"),
    # Only the first sentence is read: the "no" after the period is not.
    "There is a dog. No other animal.": ("yes", "there is a dog. no other animal.", "No"),
    # "not" is one of the paper's words; VLMEvalKit's words hold neither yes nor no.
    "There is not a dog in the image": ("no", "there is not a dog in the image", "Unknown"),
    # "No!" is not the word "No" for the paper (split on spaces only); VLMEvalKit removes "!".
    "No!": ("yes", "no!", "No"),
    # A newline is not a space for the paper's split: "No\nThere" is one word.
    "No\nThe dog is absent.": ("yes", "no\nthe dog is absent.", "No"),
    "(a) yes": ("yes", "(a) yes", "Yes"),
    "A.": ("yes", "a.", "Unknown"),
    "both": ("yes", "both", "Unknown"),
    "": ("yes", "", "Unknown"),
    "I'm sorry, I cannot help with that.": ("yes", "i'm sorry, i cannot help with that.",
                                            "Unknown"),
    "I can not tell": ("no", "i can not tell", "Unknown"),
    " yes \n": ("yes", "yes", "Yes"),
}


@pytest.mark.parametrize("answer", list(CASES))
def test_each_reading_follows_its_reference_code(answer):
    paper, lmms, vlm = CASES[answer]
    assert protocols.paper_reading(answer) == paper
    assert protocols.lmms_reading(answer) == lmms
    assert protocols.vlmevalkit_reading(answer) == vlm


def test_right_or_wrong_and_what_the_counts_take():
    # lmms-eval: right only when the whole answer is the label (utils.py line 21).
    assert protocols.correct("lmms-eval", "yes", "yes")
    assert not protocols.correct("lmms-eval", "yes.", "yes")
    assert protocols.said("lmms-eval", "yes.") is None  # left out of P and R (lines 39-65)
    # VLMEvalKit: Unknown is wrong in accuracy and "no" in the counts (yorn.py line 164).
    assert not protocols.correct("vlmevalkit", "Unknown", "no")
    assert protocols.said("vlmevalkit", "Unknown") == "no"
    assert protocols.correct("vlmevalkit", "No", "no")


def test_a_reasoning_model_is_read_after_its_thinking():
    """The engine sets `<think>...</think>` aside before any protocol reads the answer
    (backends/reasoning.py); read raw, the paper's rule would see "<think>Is" and "no"."""
    raw = "<think>Is there a dog? I see no dog... wait, yes.</think>Yes"
    answer = reasoning.split(raw).answer
    assert answer == "Yes"
    assert [protocols.paper_reading(answer), protocols.lmms_reading(answer),
            protocols.vlmevalkit_reading(answer)] == ["yes", "yes", "Yes"]
    # Without the split the paper's rule reads the thinking's first sentence.
    assert protocols.paper_reading(raw) == "no"


def test_the_paper_record_carries_what_the_other_rules_make_of_its_answer():
    parsed, scores = score("paper", "Yes, there is a dog.", "yes")
    assert parsed == {"paper": "yes", "vlmevalkit": "Yes"}
    assert scores["paper"]["correct"] == 1.0 and scores["vlmevalkit"]["correct"] == 1.0
    # lmms-eval's extraction of the paper's answer: "yes, there is a dog." is wrong.
    assert scores["paper"]["lmms-eval|extraction"] == 0.0
    parsed, scores = score("lmms-eval", "Yes", "no")
    assert parsed == {"lmms-eval": "yes"} and scores == {"lmms-eval": {"correct": 0.0}}


def counts_of(answers, labels, protocol):
    counts = Counts()
    for i, (answer, label) in enumerate(zip(answers, labels, strict=True)):
        reading = {"paper": protocols.paper_reading, "lmms-eval": protocols.lmms_reading,
                   "vlmevalkit": protocols.vlmevalkit_reading}[protocol](answer)
        said = protocols.said(protocol, reading)
        unparsed = said is None if protocol == "lmms-eval" else reading == "Unknown"
        counts.add(str(i), f"image{i // 6}", protocols.correct(protocol, reading, label), said,
                   label, unparsed)
    return counts


ANSWERS = ["Yes", "No.", "Yes, a dog.", "no", "I think so", "Unknown", "yes", "No",
           "There is not one", "yes", "Yes", "no"]
LABELS = ["yes", "no", "yes", "no", "no", "yes", "yes", "yes", "no", "no", "yes", "no"]


def test_metrics_follow_each_harness_counting():
    paper = counts_of(ANSWERS, LABELS, "paper").block("paper", intervals=False)
    # paper readings: y n y n y y y n n y y n  against  y n y n n y y y n n y n
    assert (paper["tp"], paper["fp"], paper["tn"], paper["fn"]) == (5, 2, 4, 1)
    assert paper["accuracy"] == pytest.approx(9 / 12)
    assert paper["precision"] == pytest.approx(5 / 7)
    assert paper["recall"] == pytest.approx(5 / 6)
    p, r = 5 / 7, 5 / 6
    assert paper["f1"] == pytest.approx(2 * p * r / (p + r))
    assert paper["yes_ratio"] == pytest.approx(7 / 12)
    lmms = counts_of(ANSWERS, LABELS, "lmms-eval").block("lmms-eval", intervals=False)
    # exact: Yes(y,tp) no(n,tn) yes(y,tp) No(y-label: fn) yes(n-label: fp) Yes(tp) no(tn)
    assert (lmms["tp"], lmms["fp"], lmms["tn"], lmms["fn"]) == (3, 1, 2, 1)
    assert lmms["unparsed"] == 5 and lmms["accuracy"] == pytest.approx(5 / 12)
    assert lmms["lmms_yes_ratio"] == pytest.approx(6 / 12)  # the labels' share
    vlm = counts_of(ANSWERS, LABELS, "vlmevalkit").block("vlmevalkit", intervals=False)
    assert vlm["unparsed"] == 3  # "I think so", "Unknown", "There is not one"
    # Unknown counts as no: label yes + Unknown ("Unknown" answer) is a false negative.
    assert (vlm["tp"], vlm["fp"], vlm["fn"]) == (4, 1, 2)
    assert vlm["accuracy"] == pytest.approx(7 / 12)


def test_an_undefined_metric_is_absent_with_its_reason():
    none_yes = counts_of(["No"] * 6, ["yes", "no"] * 3, "paper").block("paper",
                                                                      intervals=False)
    assert "precision" not in none_yes and "f1" not in none_yes
    assert "undefined" in none_yes["precision_unavailable"]
    assert none_yes["recall"] == 0 and none_yes["accuracy"] == 0.5


def test_intervals_draw_an_images_questions_together():
    many = counts_of(ANSWERS * 5, LABELS * 5, "paper").block("paper")
    assert many["f1_ci95_clusters"] == "image" and many["f1_ci95_n_clusters"] == 10
    low, high = many["f1_ci95"]
    assert low <= many["f1"] <= high


def test_repope_corrections_apply_only_to_their_question():
    # random/5 (COCO_val2014_000000310196, "Is there a skis in the image?") is a "yes" RePOPE
    # labels "no" (annotations/coco_repope_random.json at bcf22e5).
    image, question = "COCO_val2014_000000310196", "Is there a skis in the image?"
    assert corrected("random/5", image, question, "yes").label == "no"
    assert corrected("random/5", image, question.replace("image", "imange"), "yes").label \
        == "no"  # an older copy's typo
    other = corrected("random/5", image, "Is there a car in the image?", "yes")
    assert other.label == "yes" and "another question" in (other.problem or "")
    # A copy that already holds the corrected label keeps it, with nothing to say.
    assert corrected("random/5", image, question, "no") == Corrected("no")
    car = ("random/23", "COCO_val2014_000000211674", "Is there a car in the image?")
    assert corrected(*car, "yes").label == "ambiguous"
    wrong = corrected(*car, "no")  # neither the published label nor the corrected one
    assert wrong.label == "no" and "expects the label 'yes'" in (wrong.problem or "")
    assert corrected("random/1", image, "Is there a snowboard in the image?", "yes").label \
        == "yes"


def test_prompts_and_settings():
    assert prompt("paper", "Is there a dog in the image?") == "Is there a dog in the image?"
    assert prompt("lmms-eval", " Is there a dog in the image? ") == \
        "Is there a dog in the image?\nAnswer the question using a single word or phrase."
    assert choose_settings(["Adversarial", "random"]) == ["random", "adversarial"]
    with pytest.raises(ValueError, match="unknown setting hard"):
        choose_settings(["hard"])
    options = PopeOptions(protocol="vlmevalkit")
    assert options.families == ["paper"] and options.label_sets == ["original", "corrected"]
    assert PopeOptions().families == ["paper", "lmms-eval"]
