"""Worked examples, computed by hand from the definitions in docs/layout.md."""

from __future__ import annotations

import numpy as np
import pytest

from visioneval.canvas.metrics import Absent
from visioneval.canvas.metrics.alignment import alignment, build_groups
from visioneval.canvas.metrics.canvas_fill import canvas_fill
from visioneval.canvas.metrics.components import component_scores, threshold_match
from visioneval.canvas.metrics.geometry import iou_matrix, union_area
from visioneval.canvas.metrics.layout_iou import layout_iou
from visioneval.canvas.metrics.pixels import psnr, ssim
from visioneval.canvas.pipeline import add_completeness
from visioneval.canvas.synth import tool_response
from visioneval.canvas.tools import levenshtein, parse_tool_usage, tool_metrics

B = np.array


def test_iou_matrix_by_hand():
    gt = B([[0, 0, .4, .4], [.5, .5, .4, .4]])
    gen = B([[.1, 0, .4, .4], [.5, .7, .4, .4], [0, .6, .2, .2]])
    iou = iou_matrix(gt, gen)
    # g1/h1: overlap .3 x .4 = .12 over .16 + .16 - .12 = .2; g2/h2: .08 / .24.
    assert iou == pytest.approx(B([[0.6, 0, 0], [0, 1 / 3, 0]]))
    assert iou_matrix(np.zeros((0, 4)), gen).shape == (0, 3)
    assert iou_matrix(B([[0, 0, 0, 0]]), B([[0, 0, 0, 0]]))[0, 0] == 0.0  # empty union


def test_canvas_layout_metrics_and_thresholded_scores_by_hand():
    gt = B([[0, 0, .4, .4], [.5, .5, .4, .4]])
    gen = B([[.1, 0, .4, .4], [.5, .7, .4, .4], [0, .6, .2, .2]])
    metrics = layout_iou(gt, gen)
    assert metrics["num_matched"] == 2 and metrics["num_unmatched_gen"] == 1
    assert metrics["mean_iou"] == round((0.6 + 1 / 3) / 2, 4) == 0.4667
    assert metrics["precision"] == 0.6667 and metrics["recall"] == 1.0
    # F1 of the rounded P and R: 2 * .6667 / 1.6667 = 0.80002.
    assert metrics["layout_overlap"] == 0.8
    assert metrics["element_count_ratio"] == 1.0  # min(1, 3 / 2)

    fills_gt = B([[1, 1, 1], [np.nan] * 3])
    fills_gen = B([[0, 0, 0], [1, 0, 0], [np.nan] * 3])
    extra = component_scores(gt, gen, np.arange(2), np.arange(3), fills_gt, fills_gen)
    assert extra["iou50_matched"] == 1  # only g1/h1 reaches 0.5
    assert extra["iou50_precision"] == 0.3333 and extra["iou50_recall"] == 0.5
    assert extra["iou50_f1"] == 0.4  # 2 * 1 / (2 + 3)
    # matched area (.16 + .16) over all areas (.16 + .16 + .16 + .16 + .04).
    assert extra["block_match"] == round(0.32 / 0.68, 4) == 0.4706
    assert extra["position_similarity"] == 0.9  # centres .1 apart in x
    assert extra["color_similarity"] == 0.0  # white vs black: CIEDE2000 = 100


def test_canvas_precision_recall_are_one_with_zero_overlap_but_iou50_f1_is_zero():
    # Frame + two quadrants; the generated quadrants are swapped (no overlap at all).
    gt = B([[0, 0, 1, 1], [0, 0, .5, .5], [.5, .5, .5, .5]])
    gen = B([[0, 0, 1, 1], [.5, 0, .5, .5], [0, .5, .5, .5]])
    metrics = layout_iou(gt, gen)
    assert (metrics["precision"], metrics["recall"], metrics["layout_overlap"]) == (1.0, 1.0, 1.0)
    assert metrics["mean_iou"] == 0.3333  # the frames match (1), the quadrants do not (0, 0)
    keep = np.array([1, 2])  # the frame (index 0) is left out of the extra scores
    extra = component_scores(gt, gen, keep, keep)
    assert (extra["iou50_precision"], extra["iou50_recall"], extra["iou50_f1"]) == (0, 0, 0)
    assert extra["block_match"] == 0.0
    assert extra["position_similarity"] == Absent("no box pairs with IoU >= 0.5")


def test_threshold_matching_keeps_the_most_hits():
    from visioneval.canvas.metrics.layout_iou import hungarian

    # IoU: g1/h1 = 1/2, g1/h2 = .5/1.5, g2/h1 = .5/2.5, g2/h2 = 0. Hungarian on 1 - IoU
    # takes g1/h2 + g2/h1 (0.533 > 0.5), so thresholding its pairs finds no hit; the
    # thresholded matching keeps g1/h1.
    gt = B([[0, 0, 1, 1], [1.5, 0, 1, 1]])
    gen = B([[0, 0, 2, 1], [0.5, 0, 1, 1]])
    assert iou_matrix(gt, gen) == pytest.approx(B([[0.5, 1 / 3], [0.2, 0]]))
    match = hungarian(gt, gen)
    assert (match.pair_iou >= 0.5).sum() == 0
    hits = threshold_match(gt, gen, np.arange(2), np.arange(2))
    assert (hits.gt.tolist(), hits.gen.tolist()) == ([0], [0])


def test_union_area_exact_with_overlaps():
    assert union_area(B([[0, 0, .5, .5], [.25, .25, .5, .5]])) == pytest.approx(0.4375)
    # Nested, duplicated, zero-size and disjoint boxes.
    boxes = B([[0, 0, 1, 1], [.2, .2, .1, .1], [0, 0, 1, 1], [3, 3, 0, 5], [2, 0, 1, 2]])
    assert union_area(boxes) == pytest.approx(3.0)
    assert union_area(np.zeros((0, 4))) == 0.0


def test_union_area_matches_a_fine_raster():
    rng = np.random.default_rng(1)
    boxes = np.round(rng.uniform(0, 0.6, (30, 4)), 2)
    grid = np.zeros((200, 200), bool)
    for x, y, w, h in (boxes * 100).round().astype(int):
        grid[y:y + h, x:x + w] = True
    assert union_area(boxes) == pytest.approx(grid.sum() / 100 / 100)


def test_canvas_fill_document_shape_uses_the_largest_box():
    # document shape: frame at depth 2, so the largest box is the canvas; the full-size
    # background is dropped; union of two 0.5-squares overlapping by 0.25^2.
    xywh = B([[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, .5, .5], [.25, .25, .5, .5]])
    assert canvas_fill(xywh, B([2, 3, 3, 3])) == {"canvas_fill": 0.4375}


def test_canvas_fill_nodes_shape_quirk_counts_the_frame():
    # nodes shape: depth 1 is the frame's first child (the background here); the frame
    # itself has the same size and is dropped; what is left is the union of the squares.
    xywh = B([[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, .5, .5], [.25, .25, .5, .5]])
    assert canvas_fill(xywh, B([0, 1, 1, 1]))["canvas_fill"] == 0.4375
    # Without a background the first square is the "canvas": it and every box of its size
    # are dropped, and the frame (depth 0, 1 x 1) fills everything.
    xywh = B([[0, 0, 1, 1], [0, 0, .5, .5], [.25, .25, .5, .5]])
    assert canvas_fill(xywh, B([0, 1, 1]))["canvas_fill"] == 1.0
    assert canvas_fill(B([[0, 0, 0, 1], [0, 0, 1, 1]]), B([1, 2])) == {
        "canvas_fill": Absent("the canvas box has zero width or height")}


def test_alignment_bucket_edges():
    gt = B([[0.10, 0.10, 0.20, 0.10], [0.10, 0.40, 0.30, 0.10]])
    groups = build_groups(gt)
    assert groups.type_names() == ["x_left"] and groups.bucket.tolist() == [5]
    assert groups.box.tolist() == [pytest.approx([0.1, 0.1, 0.3, 0.4])]
    # 0.009 apart but across a bucket edge (5.45 -> 5, 5.55 -> 6): not aligned.
    apart = B([[0.109, 0.10, 0.20, 0.10], [0.111, 0.40, 0.30, 0.10]])
    values, *_ = alignment(gt, apart)
    assert values["num_gen_groups"] == 0
    assert (values["alignment_precision"], values["alignment_recall"],
            values["alignment_f1"]) == (1.0, 0.0, 0.0)
    # 0.018 apart inside one bucket (5.55 -> 6, 6.45 -> 6): aligned, and correct.
    inside = B([[0.111, 0.10, 0.20, 0.10], [0.129, 0.40, 0.30, 0.10]])
    values, _, gen_groups, _ = alignment(gt, inside)
    assert gen_groups.type_names() == ["x_left"] and gen_groups.bucket.tolist() == [6]
    assert values["alignment_f1"] == 1.0 and values["num_correct_aligned"] == 1


def test_alignment_wrong_type_and_group_order():
    gt = B([[0.10, 0.10, 0.20, 0.10], [0.10, 0.40, 0.30, 0.10]])
    # Top-, centre- and bottom-aligned in a row: three groups, none of type x_left.
    row = B([[0.10, 0.10, 0.20, 0.10], [0.50, 0.10, 0.30, 0.10]])
    values, _, gen_groups, match = alignment(gt, row)
    assert gen_groups.type_names() == ["y_top", "y_center", "y_bottom"]
    assert len(match.gt) == 1 and values["num_correct_aligned"] == 0
    assert (values["alignment_precision"], values["alignment_recall"]) == (0.0, 0.0)
    # The reference's insertion order: box by box, six types each; 12.5 rounds to 12.
    boxes = B([[0.011, 0.2, 0.1, 0.1], [0.029, 0.5, 0.1, 0.1], [0.031, 0.8, 0.1, 0.1]])
    groups = build_groups(boxes)
    assert groups.type_names() == ["x_left", "x_right", "x_center"]
    assert [m.tolist() for m in groups.members] == [[0, 1], [0, 1], [1, 2]]
    assert build_groups(B([[0, 0.25, 1, 0], [0.5, 0.23, 1, 0]])).bucket.tolist()[:1] == [12]


def test_ssim_and_psnr_agree_with_scikit_image():
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (40, 53, 3), dtype=np.uint8)
    b = np.clip(a + rng.normal(0, 30, a.shape), 0, 255).astype(np.uint8)
    b[:20] = a[:20]
    planes_a = [np.ascontiguousarray(a[..., c]) for c in range(3)]
    planes_b = [np.ascontiguousarray(b[..., c]) for c in range(3)]
    fa, fb = a.astype(np.float32) / 255, b.astype(np.float32) / 255
    assert ssim(planes_a, planes_b) == pytest.approx(
        structural_similarity(fa, fb, channel_axis=-1, data_range=1.0), abs=1e-6)
    assert psnr(planes_a, planes_b) == pytest.approx(
        peak_signal_noise_ratio(fa, fb, data_range=1.0), abs=1e-5)
    assert ssim(planes_a, planes_a) == pytest.approx(1.0)
    assert psnr(planes_a, planes_a) == float("inf")
    with pytest.raises(ValueError, match="too small"):
        ssim([a[:5, :5, 0]], [a[:5, :5, 0]])


def test_tool_counts_double_count_dedup_efficiency_and_accuracy():
    response = tool_response(["create_frame", "create_text", "create_text"])
    usage = parse_tool_usage(response)
    # user + 3 x (assistant call + tool answer) + final answer = 8 messages -> 7 steps.
    assert usage.step_count == 7
    assert usage.call_count == 6  # each call seen as a tool_call and as a tool message
    assert usage.sequence == ["create_frame", "create_text", "create_text"]
    values = tool_metrics(usage, ["create_frame", "create_rectangle", "create_text"])
    assert values["tool_call_count_dedup"] == 3 and values["unique_tool_count"] == 2
    assert values["tool_efficiency"] == 0.0625  # 1 / (7 + 6 + 2 + 1)
    assert values["tool_accuracy"] == 0.6667  # one substitution in three
    assert isinstance(tool_metrics(usage, None)["tool_accuracy"], Absent)
    # Unanswered calls are counted once; no step count -> no efficiency.
    bare = parse_tool_usage({"messages": tool_response(["a", "b"], answered=False)
                             ["json_response"]["messages"]})
    assert (bare.call_count, bare.step_count) == (2, None)
    assert isinstance(tool_metrics(bare, None)["tool_efficiency"], Absent)
    # Legacy shapes: a top-level name on a tool message; a message typed "tool".
    legacy = parse_tool_usage({"step_count": 3, "messages": [
        {"role": "tool", "name": "create_text"}, {"type": "tool", "tool": "move_node"}]})
    assert legacy.unique == ["create_text", "move_node"] and legacy.call_count == 2
    assert levenshtein(["a", "b", "c"], ["b", "c", "d"]) == 2


def test_completeness_needs_all_parts():
    sample = {"canvas_fill": 0.5, "pixel_fidelity": 0.8, "semantic_match": 0.9,
              "element_count_ratio": 1.0, "layout_overlap": 0.8, "alignment_f1": 0.5}
    add_completeness(sample)
    assert sample["visual_completeness"] == round(2.2 / 3, 4) == 0.7333
    assert sample["struct_completeness"] == round(2.3 / 3, 3) == 0.767
    partial = {"canvas_fill": 0.5, "pixel_fidelity": 0.8}
    add_completeness(partial)
    assert "visual_completeness" not in partial
    assert "semantic_match" in partial["absent"]["visual_completeness"]
