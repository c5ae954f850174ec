"""IllusionBench's three scoring rules, prompt strings and metrics, checked by hand."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from visioneval.benchmarks.illusionbench import tables
from visioneval.benchmarks.illusionbench.benchmark import IllusionBench, IllusionBenchOptions
from visioneval.benchmarks.illusionbench.prompts import lmms_prompt, original_prompt
from visioneval.benchmarks.illusionbench.protocols import (
    lmms_extract,
    lmms_recall,
    lmms_strict,
    original_bucket,
)
from visioneval.core.records import Record, Response, Sample

# (shape, scene, task, answer) -> original bucket, original with quirks fixed, lmms-recall,
# lmms-strict; worked out by hand from the rules in docs/illusionbench.md.
CASES = [
    # plain answers, with and without "Answer:"
    ("cat", "Ocean", "shape", "Cat", "shape", "shape", True, False),
    ("cat", "Ocean", "shape", "Answer: Cat", "shape", "shape", True, True),
    ("cat", "Ocean", "shape", "Answer: cat.", "shape", "shape", True, True),
    ("cat", "Ocean", "shape", "answer:cat\nbecause of the ears", "shape", "shape", True, True),
    ("cat", "City", "shape", "The answer is: cat", "shape", "shape", True, False),
    ("cat", "City", "shape", "Answer: dog\nAnswer: cat", "shape", "shape", True, False),
    # spaces versus underscores
    ("dog", "Medieval_Village", "scene", "Medieval Village", "rest", "texture", True, False),
    ("dog", "Medieval_Village", "scene", "Answer: Medieval Village", "rest", "texture", True,
     True),
    ("dog", "Medieval_Village", "scene", "medieval_village", "texture", "texture", True, False),
    ("paper_clip", "Forest", "shape", "Answer: Paper clip", "rest", "shape", True, True),
    ("face_emoji", "Cloud", "shape", "Answer: face-emoji", "rest", "rest", False, True),
    # both labels mentioned: the original's shape-first precedence
    ("cat", "Ocean", "scene", "A cat made of ocean waves", "shape", "shape", True, False),
    ("cat", "Ocean", "shape", "A cat made of ocean waves", "shape", "shape", True, False),
    ("cat", "Ocean", "scene", "Answer: Ocean, cat", "shape", "shape", True, True),
    ("cat", "Ocean", "shape", "Answer: Ocean, cat", "shape", "shape", True, False),
    # the options' spellings: "Stationery" is offered, the label is "stationary"
    ("stationary", "City", "shape", "Stationery", "rest", "shape", False, False),
    ("stationary", "City", "shape", "Answer: Stationery", "rest", "shape", False, False),
    ("stationary", "City", "shape", "Answer: stationary", "shape", "shape", True, True),
    # "Mercedes Benz" is offered, the label is "benz"
    ("benz", "Ocean", "shape", "Mercedes Benz", "shape", "shape", True, False),
    ("benz", "Ocean", "shape", "Answer: mercedes benz", "shape", "shape", True, False),
    ("benz", "Ocean", "shape", "Mercedes", "rest", "shape", False, False),
    # "Times Square" is the place; the label is "Time_square"
    ("car", "Time_square", "scene", "Times Square", "rest", "texture", False, False),
    # echoing the options scores under substring rules
    ("animal", "Ocean", "shape", "Animal, Face_Emoji, Music, Sport, Stationery, Vehicle",
     "shape", "shape", True, False),
    ("cat", "Ocean", "shape", "", "rest", "rest", False, False),
]


@pytest.mark.parametrize(("shape", "scene", "task", "text", "bucket", "fixed", "recall",
                          "strict"), CASES)
def test_rules_on_tricky_answers(shape, scene, task, text, bucket, fixed, recall, strict):
    label = shape if task == "shape" else scene
    assert original_bucket(text, shape, scene) == bucket
    assert original_bucket(text, shape, scene, fixed=True) == fixed
    assert lmms_recall(text, label)[1] is recall
    assert lmms_strict(text, label)[1] is strict


def test_strict_extraction_stops_at_newline_comma_or_period():
    assert lmms_extract("Answer:  Sand dune.\nok") == "Sand dune"
    assert lmms_extract("ANSWER : bird, maybe") == "bird"
    assert lmms_extract("I think it is a bird") == ""


# The original prompts ([R] Evaluator.py), typed out from the source notes with the option
# strings expanded; LOGO and IN differ only where the notes (tests/reference_notes/) say.
ICON_OPTIONS = ("Animal, Face_Emoji, Music, Sport, Stationery, Vehicle,Ocean, Origami, Forest, "
                "Cloud, Sand_dune, Medieval_Village, City, Underwater_ruins, Museum, "
                "Bazaar_market, Time_square")
ICON_SHAPE = ("This image contains a icon integrated into a background, where elements of the "
              "background contribute to forming the icon. Identify the icon that is represented "
              "in the image by choosing exclusively among the following options:" + ICON_OPTIONS
              + " Provide your response by stating only the single, most accurate class name "
              "that represents the icon. You have to respond with a single word.")
ICON_SCENE = ("This image contains an icon integrated into a background, where elements of the "
              "background contribute to forming the icon. Identify the background that is "
              "represented in the image by choosing exclusively among the following options:"
              + ICON_OPTIONS + ". Provide your response by stating only the single, most "
              "accurate class name that represents the background. You have to respond with a "
              "single word.")
LOGO_LIST = ("Adidas, Amazon, Apple, Audi, BMW, Mercedes Benz, Facebook, Google, Instagram, "
             "Mcdonalds, Nasa, Nike, Olympics, Playstation, Puma, Reebok, Spotify, Starbucks, "
             "Tesla, Telegram, Ubuntu")
IN_LIST = ("Airplane, Bicycle, Bird, Bottle, Car, Cat, Dog, Dolphin, Fork, Guitar, Mug, Panda, "
           "Paper_clip, Sailboat, Scooter, Teapot")
ICON_LIST = "Animal, Face_Emoji, Music, Sport, Stationery, Vehicle"


def test_original_prompts_character_by_character():
    assert original_prompt("ICON", "shape") == ICON_SHAPE
    assert original_prompt("ICON", "scene") == ICON_SCENE
    logo_shape = ICON_SHAPE.replace(ICON_LIST, LOGO_LIST).replace(
        "forming the icon", "forming the logo").replace("Identify the icon", "Identify the logo"
                                                        ).replace("represents the icon",
                                                                  "represents the logo")
    assert "contains a icon" in logo_shape
    assert original_prompt("LOGO", "shape") == logo_shape
    assert original_prompt("LOGO", "scene") == ICON_SCENE.replace(ICON_LIST, LOGO_LIST).replace(
        "forming the icon", "forming the logo")
    assert original_prompt("IN", "shape") == ICON_SHAPE.replace(ICON_LIST, IN_LIST).replace(
        "Identify the icon", "Identify the shape")
    assert original_prompt("IN", "scene") == ICON_SCENE.replace(ICON_LIST, IN_LIST)


def test_lmms_prompts_character_by_character():
    assert lmms_prompt("ICON", "shape") == (
        "You are given an image where scene elements form an abstract SHAPE.\n"
        "Task: Identify what shape is hidden in this image.\n\n"
        "Options: [animal, vehicle, stationary, sport, music, face_emoji]\n\n"
        "Reply in this exact format:\nAnswer: <your choice>\n")
    scene = ("You are given an image depicting a SCENE.\n"
             "Task: Identify what scene is shown in this image.\n\n"
             "Options: [Underwater_ruins, Time_square, Medieval_Village, City, Museum, Cloud, "
             "Ocean, Sand_dune, Bazaar_market, Forest, Origami]\n\n"
             "Reply in this exact format:\nAnswer: <your choice>\n")
    assert lmms_prompt("ICON", "scene") == lmms_prompt("LOGO", "scene") == \
        lmms_prompt("IN", "scene") == scene
    assert "[tesla, starbucks, mcdonalds, adidas, reebok, bmw, ubuntu, benz, telegram" in \
        lmms_prompt("LOGO", "shape")
    assert "[guitar, teapot, cat, paper_clip, bird," in lmms_prompt("IN", "shape")


# -- metrics on hand-made records -------------------------------------------------------------

# (shape, scene, difficulty, answer to the original shape prompt, to the original scene prompt,
#  to the lmms shape prompt, to the lmms scene prompt); None is a failed request.
ICON_ROWS = [
    ("animal", "Ocean", "Easy", "Animal", "Ocean", "Answer: animal", "Answer: Ocean"),
    ("stationary", "City", "Hard", "Stationery", "City", "Answer: stationary", "City"),
    ("music", "Forest", "Easy", "Forest", "A music note in a forest", "music", "Answer: Forest"),
    ("vehicle", "Cloud", "Hard", None, "Sand dune", None, "Answer: Sand_dune"),
]


def _records(bench: IllusionBench) -> list[Record]:
    out = []
    for row, (shape, scene, difficulty, *answers) in enumerate(ICON_ROWS):
        keys = [("shape", "original"), ("scene", "original"), ("shape", "lmms"),
                ("scene", "lmms")]
        for (task, family), text in zip(keys, answers, strict=True):
            sample = Sample(id=f"ICON/{row}/{task}/{family}", group="ICON", messages=(),
                            target={"shape": shape, "scene": scene},
                            metadata={"task": task, "family": family, "difficulty": difficulty})
            response = Response(text=text) if text is not None else Response(error="HTTP 500")
            parsed, scores = bench.score(sample, text) if text is not None else ({}, {})
            out.append(Record(id=sample.id, group="ICON", target=sample.target,
                              response=response, parsed=parsed, scores=scores,
                              metadata=sample.metadata))
    return out


def _bench(**options) -> IllusionBench:
    return IllusionBench(IllusionBenchOptions(subsets=["ICON"], **options), Path("."), {})


def test_metrics_by_hand():
    bench = _bench()
    metrics = bench.summarize(_records(bench))
    assert list(metrics) == ["original", "lmms-strict", "lmms-recall"]
    original = metrics["original"]["ICON"]
    assert original["rule"] == "original"
    # shape: animal right, stationary (Stationery) rest, music answered Forest, vehicle failed
    assert original["shape"]["n"] == 3 and original["shape"]["n_errors"] == 1
    assert original["shape_recall"] == pytest.approx(1 / 3)
    assert original["shape"]["per_difficulty"]["Easy"] == {"n": 2, "n_errors": 0,
                                                           "recall": 0.5}
    assert original["shape"]["per_difficulty"]["Hard"] == {"n": 1, "n_errors": 1, "recall": 0.0}
    assert original["shape"]["per_class"]["vehicle"] == {
        "n": 0, "n_errors": 1, "unavailable": "no scored samples (1 failed requests)"}
    # scene: Ocean, City right; "music ... forest" is shape first; "Sand dune" is rest
    assert original["scene_recall"] == 0.5
    assert original["distribution"]["shape_prompt"] == pytest.approx(
        {"n": 3, "shape": 1 / 3, "texture": 1 / 3, "rest": 1 / 3})
    assert original["distribution"]["scene_prompt"] == pytest.approx(
        {"n": 4, "shape": 0.25, "texture": 0.5, "rest": 0.25})
    quirks = original["quirks"]
    intervals = {k: quirks.pop(k) for k in list(quirks) if k.endswith(("_se", "_ci95"))}
    assert quirks == pytest.approx({
        "rule": "original-fixed", "shape_recall": 2 / 3, "shape_delta": 1 / 3,
        "shape_changed": 1, "scene_recall": 0.5, "scene_delta": 0.0, "scene_changed": 0})
    # The variant's own intervals, from the same samples as its recall.
    assert set(intervals) == {"shape_recall_se", "shape_recall_ci95", "scene_recall_se",
                              "scene_recall_ci95"}
    for task in ("shape", "scene"):
        low, high = intervals[f"{task}_recall_ci95"]
        assert low <= quirks[f"{task}_recall"] <= high
    assert original["labels_not_offered"] == {"shape": ["stationary"], "scene": []}
    recall = metrics["lmms-recall"]["ICON"]
    assert recall["shape_recall"] == pytest.approx(1 / 3)  # "stationery" is not "stationary"
    assert recall["scene_recall"] == 0.75  # no precedence: "forest" counts
    assert "distribution" not in recall
    strict = metrics["lmms-strict"]["ICON"]
    assert strict["shape_recall"] == pytest.approx(2 / 3)  # "music" lacks "Answer:"
    assert strict["scene_recall"] == 0.5  # "City" lacks it; Sand_dune is not Cloud
    assert strict["labels_not_offered"] == {"shape": [], "scene": []}


def test_fix_quirks_swaps_the_reported_variant():
    bench = _bench(fix_quirks=True, protocol="original")
    metrics = bench.summarize(_records(bench))
    assert list(metrics) == ["original"]
    block = metrics["original"]["ICON"]
    assert block["rule"] == "original-fixed" and block["shape_recall"] == pytest.approx(2 / 3)
    assert block["quirks"]["rule"] == "original"
    assert block["quirks"]["shape_delta"] == pytest.approx(-1 / 3)


def test_no_scored_sample_means_no_number():
    bench = _bench(protocol="lmms-strict")
    records = [r for r in _records(bench) if r.metadata["family"] == "lmms"]
    for r in records:
        if r.metadata["task"] == "scene":
            r.response = Response(error="timeout")
    block = bench.summarize(records)["lmms-strict"]["ICON"]
    assert "scene_recall" not in block and "shape_recall" in block
    assert (block["scene"]["n"], block["scene"]["n_errors"]) == (0, 4)
    assert block["scene"]["unavailable"] == "no scored samples (4 failed requests)"
    assert "recall" not in block["scene"]["per_difficulty"]["Easy"]


def test_side_by_side_csv():
    bench = _bench()
    rows = list(csv.DictReader(io.StringIO(tables.to_csv(bench.summarize(_records(bench))))))
    assert [(r["protocol"], r["rule"]) for r in rows] == [
        ("original", "as published"), ("original", "quirks fixed"),
        ("lmms-strict", "lmms-strict"), ("lmms-recall", "lmms-recall")]
    assert rows[0] == {"protocol": "original", "rule": "as published", "subset": "ICON",
                        "shape_recall_pct": "33.3", "scene_recall_pct": "50.0",
                        "shape_n": "3", "scene_n": "4", "n_errors": "1",
                        "shape_delta_pct": "", "scene_delta_pct": "",
                        # 1 of 3 and 2 of 4 right: an all-wrong and an all-right resample
                        # each have a chance over 2.5% ((2/3)^3, (1/3)^3, (1/2)^4)
                        "shape_ci95_low_pct": "0.0", "shape_ci95_high_pct": "100.0",
                        "scene_ci95_low_pct": "0.0", "scene_ci95_high_pct": "100.0"}
    assert (rows[1]["shape_recall_pct"], rows[1]["shape_delta_pct"]) == ("66.7", "+33.3")
    # The quirks-fixed variant has its own interval: 2 of 3 right, and an all-wrong resample
    # ((1/3)^3 = 3.7%) and an all-right one ((2/3)^3 = 30%) each have over 2.5%.
    assert (rows[1]["shape_ci95_low_pct"], rows[1]["shape_ci95_high_pct"]) == ("0.0", "100.0")
    assert rows[2]["shape_ci95_low_pct"] != ""
    assert (rows[2]["shape_delta_pct"], rows[2]["scene_delta_pct"]) == ("+33.3", "+0.0")
    assert (rows[3]["scene_recall_pct"], rows[3]["scene_delta_pct"]) == ("75.0", "+25.0")
