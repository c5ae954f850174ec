"""IllusionBench image names -> labels, and the stratified --sample-seed draw."""

from __future__ import annotations

from collections import Counter

import pytest

from visioneval.benchmarks.illusionbench.names import BadImageName, parse
from visioneval.benchmarks.illusionbench.sampling import stratified


@pytest.mark.parametrize(("subset", "name", "shape", "scene", "index"), [
    # lmms-eval's parse_image_name: empty fields between hyphens are dropped, and a trailing
    # numeric field of the shape part is an index, whatever the subset.
    ("ICON", "vehicle--2-City-Easy-1.5-3.png", "vehicle", "City", "2"),
    ("ICON", "animal-1--Ocean-Hard-1.05-9.png", "animal", "Ocean", "1"),
    ("LOGO", "bmw-1-Cloud-Easy-1.25-4.png", "bmw", "Cloud", "1"),
    ("LOGO", "bmw--Cloud-Easy-1.25-4.png", "bmw", "Cloud", None),
    ("IN", "cat-3-Forest-Hard-0.85-1.png", "cat", "Forest", "3"),
    ("IN", "-cat-Forest-Hard-0.85-1.png", "cat", "Forest", None),
    ("LOGO", "7-Cloud-Easy-1.25-4.png", "7", "Cloud", None),  # a lone number is the shape
])
def test_names_parse_as_lmms_eval_does(subset, name, shape, scene, index):
    parsed = parse(subset, name)
    assert (parsed.shape, parsed.scene, parsed.index) == (shape, scene, index)


@pytest.mark.parametrize(("subset", "name", "shape", "scene", "difficulty", "index"), [
    ("ICON", "animal-1-Medieval_Village-Easy-1.5-90.png", "animal", "Medieval_Village", "Easy",
     "1"),
    ("ICON", "face_emoji-12-Sand_dune-Hard-0.85-3.png", "face_emoji", "Sand_dune", "Hard", "12"),
    ("ICON", "stationary-2-City-hard-1.05-7.PNG", "stationary", "City", "Hard", "2"),
    ("LOGO", "benz-Ocean-Easy-1.25-14.png", "benz", "Ocean", "Easy", None),
    ("LOGO", "mercedes-benz-Time_square-Hard-1.05-2.png", "mercedes-benz", "Time_square",
     "Hard", None),
    ("IN", "paper_clip-Bazaar_market-Easy-1.4-100.png", "paper_clip", "Bazaar_market", "Easy",
     None),
    ("IN", "folder/cat-Forest-Hard-0.85-1.png", "cat", "Forest", "Hard", None),
])
def test_good_names_give_the_file_spellings(subset, name, shape, scene, difficulty, index):
    parsed = parse(subset, name)
    assert (parsed.shape, parsed.scene, parsed.difficulty, parsed.index) == \
        (shape, scene, difficulty, index)


@pytest.mark.parametrize(("subset", "name"), [
    ("ICON", "animal-Medieval_Village-Easy-1.5-90.png"),  # no icon index
    ("ICON", "animal-x-Ocean-Easy-1.5-90.png"),  # index not a number
    ("LOGO", "benz-Ocean-Medium-1.25-14.png"),  # no Easy/Hard
    ("LOGO", "benz-Ocean-Easy-strong-14.png"),  # strength not a number
    ("IN", "cat-Forest-Easy-1.4.png"),  # no id
    ("IN", "cat-Forest-Easy-1.4-3.jpg"),  # not a .png
    ("IN", "Forest-Easy-1.4-3.png"),  # no shape
    ("IN", ""),
    ("IN", None),
])
def test_bad_names_say_which_pattern_they_miss(subset, name):
    with pytest.raises(BadImageName) as caught:
        parse(subset, name)
    message = str(caught.value)
    if name:
        assert message == f"does not follow the {subset} pattern " + (
            "shape-index-Scene-Difficulty-strength-id.png" if subset == "ICON" else
            "shape-Scene-Difficulty-strength-id.png")
    else:
        assert message == "image_name is empty or not text"


def test_stratified_draw_is_proportional_and_deterministic():
    rows = [(i, ("cat" if i < 60 else "dog", "Easy" if i % 3 else "Hard")) for i in range(90)]
    chosen = stratified(rows, 30, seed=1, salt="IN")
    assert len(chosen) == 30
    assert chosen == stratified(rows, 30, seed=1, salt="IN")
    assert chosen != stratified(rows, 30, seed=2, salt="IN")
    strata = Counter(key for i, key in rows if i in chosen)
    # 40/20/20/10 rows per stratum -> 13.3/6.7/6.7/3.3 of 30: every stratum within one.
    assert abs(strata[("cat", "Easy")] - 40 / 3) < 1 and abs(strata[("dog", "Hard")] - 10 / 3) < 1
    assert stratified(rows, 500, seed=1, salt="IN") == set(range(90))
