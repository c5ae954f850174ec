"""Where visioneval met CANVAS's reference code side by side and differed: each case
matches CANVAS's code or is a named per-sample state (see docs/layout.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from layout_fixtures import MODEL, VARIANT, by_id, folder, invoke, load, swapped

from visioneval.canvas.figma import LayoutFileError, parse_layout
from visioneval.canvas.metrics.canvas_fill import canvas_fill
from visioneval.canvas.pairs import collect_pairs
from visioneval.canvas.synth import figma_json, frame, rect, tool_response, write_gen, write_gt
from visioneval.canvas.tools import ToolFileError, parse_tool_usage, tool_metrics


def test_a_fractional_step_count_is_kept():
    usage = parse_tool_usage(tool_response(["create_frame"], step_count=4.5))
    assert usage.step_count == 4.5
    values = tool_metrics(usage, None)
    # CANVAS: S + C + U = 4.5 + 2 (the call counted twice) + 1.
    assert values["step_count"] == 4.5 and values["tool_efficiency"] == round(1 / 8.5, 4)
    assert parse_tool_usage(tool_response(["x"], step_count=4)).step_count == 4


@pytest.mark.parametrize("step", ["4", True, float("nan"), -1])
def test_a_step_count_that_is_no_count_is_a_named_error(step):
    with pytest.raises(ToolFileError, match="step_count"):
        parse_tool_usage(tool_response(["create_frame"], step_count=step))


def test_a_box_with_negative_size_covers_its_area_as_shapely_counts_it():
    # Frame, then a box from x = 0.5 back to 0 (width -0.5) and 0.5 high: shapely's
    # box(0.5, 0, 0, 0.5) normalises its corners, so the union covers 0.25.
    xywh = np.array([[0, 0, 1, 1], [0.5, 0, -0.5, 0.5]], dtype=float)
    assert canvas_fill(xywh, np.array([1, 2]))["canvas_fill"] == 0.25
    both = np.array([[0, 0, 1, 1], [0.5, 0.5, -0.5, -0.5], [0, 0, 0.25, 0.5]], dtype=float)
    assert canvas_fill(both, np.array([1, 2, 2]))["canvas_fill"] == 0.25


@pytest.mark.parametrize("opacity", ["0.5", None, [1], True])
def test_an_opacity_that_is_not_a_number_is_a_named_error(opacity):
    data = figma_json(frame(100, 100, rect("Card", 0, 0, 10, 10)), "document")
    card = data["document"]["children"][0]["children"][0]["children"][0]
    card["opacity"] = opacity
    with pytest.raises(LayoutFileError, match=r"node 1:3 \(Card\) has opacity .*not a number"):
        parse_layout(data, "gen.json")


@pytest.mark.parametrize("name", [{"tool": "create_frame"}, ["create_frame"], 7])
def test_a_tool_name_that_is_not_text_is_a_named_error(name):
    response = tool_response(["create_frame"])
    response["json_response"]["messages"][1]["content"]["data"]["tool_calls"][0]["name"] = name
    with pytest.raises(ToolFileError, match=r"message 1: the tool name .* is not text"):
        parse_tool_usage(response, "r.json")


def _pair(base: Path, gid: str = "g1") -> Path:
    gt, gen = swapped()
    write_gt(base, gid, gt)
    return write_gen(base, gid, gen, MODEL, VARIANT, calls=None)


def test_the_response_file_is_any_json_response_in_the_folder(tmp_path):
    item = _pair(tmp_path)
    (item / "run-7-json-response.json").write_text(json.dumps(tool_response(["a"])))
    (pair,), _ = collect_pairs(tmp_path, MODEL, VARIANT)
    assert pair.response == item / "run-7-json-response.json" and pair.response_note is None


def test_several_response_files_the_folder_name_wins_else_the_first_by_name(tmp_path):
    item = _pair(tmp_path)
    for name in ("b-json-response.json", "a-json-response.json"):
        (item / name).write_text(json.dumps(tool_response(["a"])))
    (pair,), _ = collect_pairs(tmp_path, MODEL, VARIANT)
    assert pair.response == item / "a-json-response.json"
    assert pair.response_note == ("2 files match *-json-response.json: a-json-response.json, "
                                  "b-json-response.json; used a-json-response.json (the "
                                  "first by name)")
    (item / f"{item.name}-json-response.json").write_text(json.dumps(tool_response(["a"])))
    (pair,), _ = collect_pairs(tmp_path, MODEL, VARIANT)
    assert pair.response == item / f"{item.name}-json-response.json"
    assert pair.response_note is None


@pytest.mark.slow
def test_several_response_files_are_noted_in_the_sample(tmp_path):
    item = _pair(tmp_path)
    for name in ("b-json-response.json", "a-json-response.json"):
        (item / name).write_text(json.dumps(tool_response(["a"] * (2 if name[0] == "a" else 5))))
    out = tmp_path / "out.json"
    result = invoke("--base-dir", tmp_path, "--out", out, "--workers", 1, "--no-progress",
                    "--skip-semantic")
    sample = by_id(load(out))["g1"]
    assert sample["tool_call_count"] == 4  # a-json-response.json: 2 calls, each counted twice
    assert "used a-json-response.json" in sample["notes"]["tool_usage"]
    assert "image_only/g1 (tool_usage): 2 files match" in result.stderr


@pytest.mark.slow
def test_a_ground_truth_without_a_visible_box_is_a_named_error(tmp_path):
    gt, gen = swapped()
    gt.visible = False
    for child in gt.children:
        child.opacity = 0.0
    write_gt(tmp_path, "empty", gt)
    write_gen(tmp_path, "empty", gen, MODEL, VARIANT)
    out = tmp_path / "out.json"
    result = invoke("--base-dir", tmp_path, "--out", out, "--workers", 1, "--no-progress",
                    "--skip-semantic")
    assert result.exit_code == 1
    sample = by_id(load(out))["empty"]
    for family in ("layout_iou", "alignment", "components"):
        assert sample[f"{family}_error"].endswith(
            "empty.json: no visible box in the ground truth (every node is hidden, "
            "transparent or has no absoluteBoundingBox)")
    for key in ("mean_iou", "precision", "recall", "layout_overlap", "element_count_ratio",
                "alignment_f1", "iou50_f1", "struct_completeness"):
        assert key not in sample
    assert "canvas_fill" in sample and "pixel_fidelity" in sample and "tool_call_count" in sample
    assert "no visible box in the ground truth" in result.stderr
    assert folder(tmp_path, "empty").is_dir()
