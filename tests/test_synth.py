"""The P3-style synthetic generator: schema, HF metadata, determinism, questions, boxes,
difficulty levels and the one-feature rule."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from scipy import ndimage

from visioneval.baselines.prompt_reading import bbox
from visioneval.benchmarks.salbench.synth import (
    HUE_RANGE,
    make_scene,
    scene_difficulty,
    scene_feature,
    write_synthetic,
)
from visioneval.io.parquet import image_bytes, iter_rows, parquet_files

N = 70  # more than one 64-row group
CONFIGS = ("P3", "P3_box", "P3_box_img")
COLUMNS = ["image", "question", "answer", "image_id"]
CLASSES = ("orientation", "color", "size")
DIFFICULTIES = ("easy", "medium", "hard")
IMAGE_ID = re.compile(r"image_(rectangle|ellipse|triangle|lshape|arrow)_(-?\d+)_"
                      r"(orientation|color|size)_(easy|medium|hard)_(\d+)_(\d+)")
COLUMN = {"color": 0, "size": 1, "orientation": 2}  # in Scene.target / Scene.distractors

# The authors' wording, written out here independently of the generator.
DETECTION = (
    "Context: Given this list of low level visual features defined according to feature "
    "integration theory: Orientation, Color, Size. Task: Examine this image and identify the "
    "feature that makes one object notably different from the others. Answer the question "
    "using a single word or phrase.")
REFERRING = (
    "Context: This image depicts a scene with  {n} objects. Among those, one object at location "
    "given by this bounding box x_min={b}, y_min={b}, x_max={b}, y_max={b}, is different from "
    "the others. Given this list of low level visual features defined according to feature "
    "integration theory: Orientation, Color and Size. Identify how the special object differs "
    "from the rest. Answer the question using a single word or phrase.")
VISUAL_REFERRING = (
    "Context: This image depicts a scene with many similar objects. Among those, one object "
    "highlighted in a red box is different from the others. Task: Given this list of low level "
    "visual features defined according to Feature Integration Theory: size, color, orientation. "
    "In which way does the special object differ from the rest. Answer the question using a "
    "single word or phrase.")
REFERRING_RE = re.compile(
    re.escape(REFERRING).replace(re.escape("{n}"), r"(\d+)").replace(re.escape("{b}"),
                                                                       r"(\d\.\d\d)"))


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("synth")
    assert write_synthetic(out, N, seed=0) == {c: N for c in CONFIGS}
    return out


@pytest.fixture(scope="module")
def rows(root) -> dict[str, list[dict]]:
    return {c: [r.values for r in iter_rows(parquet_files(root / c), COLUMNS)] for c in CONFIGS}


@pytest.fixture(scope="module")
def scenes():
    return [make_scene(0, i) for i in range(N)]


def difficulty(image_id: str) -> str:
    match = IMAGE_ID.fullmatch(image_id)
    assert match, image_id
    return match.group(4)


def red_pixels(data: bytes) -> np.ndarray:
    rgb = np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(int)
    return (rgb[..., 0] >= 200) & (rgb[..., 1] <= 70) & (rgb[..., 2] <= 70)


@pytest.mark.slow
def test_files_schema_and_hf_metadata(root):
    for config in CONFIGS:
        path = root / config / "shard_00000.parquet"
        assert parquet_files(root / config) == [path]
        handle = pq.ParquetFile(path)
        schema = handle.schema_arrow
        assert schema.names == COLUMNS
        assert schema.field("image").type == pa.struct([("bytes", pa.binary()),
                                                        ("path", pa.string())])
        for name in COLUMNS[1:]:
            assert schema.field(name).type == pa.string()
        features = json.loads(schema.metadata[b"huggingface"])["info"]["features"]
        assert features["image"] == {"_type": "Image"}
        for name in COLUMNS[1:]:
            assert features[name] == {"dtype": "string", "_type": "Value"}
        groups = [handle.metadata.row_group(g).num_rows for g in range(handle.num_row_groups)]
        assert sum(groups) == N and max(groups) <= 64 and len(groups) == 2


def test_rows_read_back_as_pngs(rows):
    for config in CONFIGS:
        assert len(rows[config]) == N
        for row in rows[config]:
            assert row["image"]["path"] == f"{row['image_id']}.png"
            image = Image.open(io.BytesIO(image_bytes(row["image"])))
            assert image.format == "PNG" and image.mode == "RGB" and image.size == (384, 384)


def test_same_scenes_in_every_config(rows):
    ids = [r["image_id"] for r in rows["P3"]]
    assert len(set(ids)) == N
    for config in CONFIGS[1:]:
        assert [r["image_id"] for r in rows[config]] == ids
        assert [r["answer"] for r in rows[config]] == [r["answer"] for r in rows["P3"]]
    for plain, referring in zip(rows["P3"], rows["P3_box"], strict=True):
        assert image_bytes(plain["image"]) == image_bytes(referring["image"])


def test_answers_are_balanced_p3_classes(rows):
    counts = Counter(r["answer"] for r in rows["P3"])
    assert set(counts) == {"orientation", "color", "size"}
    assert max(counts.values()) - min(counts.values()) <= 1
    for row in rows["P3"]:
        assert f"_{row['answer']}_" in row["image_id"]


@pytest.mark.slow
def test_image_ids_name_shape_angle_class_difficulty_count_and_index(rows, scenes):
    for index, (row, scene) in enumerate(zip(rows["P3"], scenes, strict=True)):
        match = IMAGE_ID.fullmatch(row["image_id"])
        assert match, row["image_id"]
        shape, angle, answer, level, n_objects, last = match.groups()
        assert answer == row["answer"] and int(last) == index and int(angle) % 15 == 0
        assert row["image_id"] == scene.image_id
        assert (shape, int(angle), answer, level, int(n_objects)) == (
            scene.shape, scene.angle, scene.feature, scene.difficulty, scene.n_objects)
        assert int(n_objects) == len(scene.distractors) + 1
        decoded = np.asarray(Image.open(io.BytesIO(image_bytes(row["image"]))).convert("RGB"))
        assert np.array_equal(decoded, np.asarray(scene.image))


def test_difficulties_are_balanced_and_independent_of_the_class(rows):
    levels = [difficulty(r["image_id"]) for r in rows["P3"]]
    answers = [r["answer"] for r in rows["P3"]]
    counts = Counter(levels)
    assert set(counts) == set(DIFFICULTIES)
    assert max(counts.values()) - min(counts.values()) <= 1
    for start in range(0, N - 2, 3):  # each triple: every difficulty once, every class once
        assert sorted(levels[start:start + 3]) == sorted(DIFFICULTIES)
        assert sorted(answers[start:start + 3]) == sorted(CLASSES)
    for start in range(0, N - 8, 9):  # each block of nine: every (class, difficulty) pair once
        assert len(set(zip(answers[start:start + 9], levels[start:start + 9], strict=True))) == 9
    for seed in (0, 1, 5):
        pairs = Counter((scene_feature(seed, i), scene_difficulty(seed, i)) for i in range(900))
        assert sorted(pairs) == sorted((c, d) for c in CLASSES for d in DIFFICULTIES)
        assert set(pairs.values()) == {100}


def test_exactly_one_feature_differs_and_clearly(scenes):
    """The target's difference in its feature is >= 3x every distractor's deviation there; in
    the other two features it sits exactly at the distractors' median."""
    spreads = {level: [] for level in DIFFICULTIES}
    for scene in scenes:
        distractors, target = np.array(scene.distractors), np.array(scene.target)
        median = np.median(distractors, axis=0)
        spread = np.abs(distractors - median).max(axis=0)
        own = COLUMN[scene.feature]
        for column in set(range(3)) - {own}:
            assert target[column] == median[column], (scene.image_id, column)
        assert abs(target[own] - median[own]) >= 3 * spread[own], scene.image_id
        assert abs(target[own] - median[own]) > 0.05, scene.image_id
        hues = np.append(distractors[:, 0], target[0])
        assert HUE_RANGE[0] <= hues.min() and hues.max() <= HUE_RANGE[1]
        spreads[scene.difficulty].append(spread)
    assert not np.any(spreads["easy"])  # identical distractors
    for level in ("medium", "hard"):  # natural variation in all three features
        assert np.all(np.array(spreads[level]) > 0), level
    assert np.array(spreads["hard"]).max(axis=0)[2] > np.array(spreads["medium"]).max(axis=0)[2]


def test_hard_targets_differ_less_than_easy_ones(scenes):
    def difference(scene):
        own = COLUMN[scene.feature]
        return abs(scene.target[own] - np.median([d[own] for d in scene.distractors]))

    for feature in CLASSES:
        by_level = {level: [difference(s) for s in scenes
                            if s.feature == feature and s.difficulty == level]
                    for level in DIFFICULTIES}
        assert all(by_level.values()), feature
        assert min(by_level["easy"]) > max(by_level["medium"]), feature
        assert np.median(by_level["hard"]) < np.median(by_level["medium"]), feature


def test_questions_match_the_templates(rows):
    assert all(r["question"] == DETECTION for r in rows["P3"])
    assert all(r["question"] == VISUAL_REFERRING for r in rows["P3_box_img"])
    for row in rows["P3_box"]:
        match = REFERRING_RE.fullmatch(row["question"])
        assert match, row["question"]
        n_objects = int(match.group(1))
        assert 20 <= n_objects <= 60
        assert row["image_id"].split("_")[-2] == str(n_objects)
        x0, y0, x1, y1 = (float(v) for v in match.groups()[1:])
        assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1


def test_bbox_matches_the_red_box(rows):
    for referring, visual in zip(rows["P3_box"], rows["P3_box_img"], strict=True):
        red = red_pixels(image_bytes(visual["image"]))
        ys, xs = np.nonzero(red)
        assert len(xs) > 0
        drawn = (xs.min() / 384, ys.min() / 384, (xs.max() + 1) / 384, (ys.max() + 1) / 384)
        stated = bbox(referring["question"])
        assert stated is not None
        assert np.allclose(drawn, stated, atol=0.03), (referring["image_id"], drawn, stated)


@pytest.mark.slow
def test_nothing_but_the_target_inside_or_under_the_red_box(rows):
    for plain, visual in zip(rows["P3"], rows["P3_box_img"], strict=True):
        ys, xs = np.nonzero(red_pixels(image_bytes(visual["image"])))
        x0, y0, x1, y1 = xs.min(), ys.min(), xs.max(), ys.max()
        rgb = np.asarray(Image.open(io.BytesIO(image_bytes(plain["image"]))).convert("RGB"))
        foreground = (np.abs(rgb.astype(int) - rgb[0, 0].astype(int)) > 30).any(axis=2)
        labels, _ = ndimage.label(foreground, structure=np.ones((3, 3)))
        near = set(np.unique(labels[y0:y1 + 1, x0:x1 + 1])) - {0}
        assert len(near) == 1, plain["image_id"]  # the target, and nothing else
        ty, tx = np.nonzero(labels == near.pop())
        assert tx.min() > x0 + 3 and tx.max() < x1 - 3, plain["image_id"]
        assert ty.min() > y0 + 3 and ty.max() < y1 - 3, plain["image_id"]


def test_objects_never_look_red(rows):
    for row in rows["P3"]:
        assert not red_pixels(image_bytes(row["image"])).any(), row["image_id"]


def test_same_seed_same_bytes_and_prefix_stable(tmp_path, root):
    write_synthetic(tmp_path / "a", 6, seed=0)
    write_synthetic(tmp_path / "b", 6, seed=0)
    write_synthetic(tmp_path / "c", 6, seed=1)
    for config in CONFIGS:
        a = (tmp_path / "a" / config / "shard_00000.parquet").read_bytes()
        b = (tmp_path / "b" / config / "shard_00000.parquet").read_bytes()
        c = (tmp_path / "c" / config / "shard_00000.parquet").read_bytes()
        assert a == b and a != c
        small = [r.values["image"] for r in iter_rows([tmp_path / "a" / config /
                                                       "shard_00000.parquet"], ["image"])]
        large = [r.values["image"] for r in iter_rows(parquet_files(root / config), ["image"],
                                                      limit=6)]
        assert small == large  # scene i depends on (seed, i) only


def test_zero_rows(tmp_path):
    assert write_synthetic(tmp_path, 0) == {c: 0 for c in CONFIGS}
    assert pq.ParquetFile(tmp_path / "P3" / "shard_00000.parquet").metadata.num_rows == 0
