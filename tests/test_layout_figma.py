"""Figma REST JSON in both shapes, the visibility rules, normalisation, broken files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from visioneval.canvas.figma import LayoutFileError, load_layout, parse_layout
from visioneval.canvas.synth import figma_json, frame, rect


def design():
    # Absolute design coordinates; the frame sits at (1000, 500).
    return frame(200, 100, rect("Title", 1020, 510, 100, 20, (0, 0, 0), type="TEXT"),
                 rect("Hidden", 1000, 500, 50, 50, (1, 0, 0), visible=False),
                 rect("Ghost", 1000, 500, 50, 50, (1, 0, 0), opacity=0.01),
                 rect("Card", 1100, 550, 100, 50, (0, 0, 1)).add(
                     rect("Inner", 1110, 560, 20, 10, (0, 1, 0))),
                 x=1000, y=500)


def test_document_shape_depths_and_normalisation():
    layout = parse_layout(json.dumps(figma_json(design(), "document")))
    names = [b.name for b in layout.boxes]
    # DOCUMENT and the page (CANVAS) have no bounding box; hidden and 1%-opacity nodes are
    # dropped; a dropped node's children would still be walked.
    assert names == ["Screen", "Title", "Card", "Inner"]
    assert [b.depth for b in layout.boxes] == [2, 3, 3, 4]
    assert layout.root == 0 and layout.frame == (1000, 500, 200, 100)
    title = layout.boxes[1]
    assert (title.x, title.y, title.w, title.h) == (0.1, 0.1, 0.5, 0.2)
    assert title.type == "TEXT" and title.fill == (0, 0, 0)
    assert title.render == (1020, 510, 100, 20)  # render bounds stay absolute
    assert np.allclose(layout.xywh[3], [0.55, 0.6, 0.1, 0.1])
    assert np.isnan(layout.fills).sum() == 0


def test_nodes_shape_is_the_first_entry_and_starts_at_depth_zero():
    data = figma_json(design(), "nodes")
    data["nodes"]["other"] = {"document": {"type": "FRAME"}}  # only the first entry counts
    layout = parse_layout(json.dumps(data))
    assert [b.depth for b in layout.boxes] == [0, 1, 1, 2]
    assert layout.root == 0


def test_a_node_with_a_hidden_parent_and_fills():
    data = figma_json(frame(10, 10, rect("Parent", 0, 0, 5, 5, visible=False).add(
        rect("Child", 1, 1, 2, 2))), "document")
    child = data["document"]["children"][0]["children"][0]["children"][0]["children"][0]
    child["fills"] = [{"type": "GRADIENT_LINEAR"}, {"type": "SOLID", "visible": False,
                                                    "color": {"r": 1, "g": 0, "b": 0}},
                      {"type": "SOLID", "color": {"r": 0, "g": 0.5, "b": 1, "a": 1}}]
    layout = parse_layout(data)
    assert [b.name for b in layout.boxes] == ["Screen", "Child"]
    assert layout.boxes[1].fill == (0, 0.5, 1)


@pytest.mark.parametrize("text, message", [
    ("{not json", "not JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"name": "x"}', "neither 'document' nor 'nodes'"),
    ('{"nodes": {}}', "'nodes' is empty"),
    ('{"document": {"type": "DOCUMENT", "children": [{"type": "TEXT"}]}}', "no FRAME/CANVAS"),
])
def test_broken_files_name_the_problem(tmp_path, text, message):
    path = tmp_path / "design.json"
    path.write_text(text)
    with pytest.raises(LayoutFileError, match=message) as info:
        load_layout(path)
    assert str(path) in str(info.value)


def _frame_doc(**bbox):
    box = {"x": 0, "y": 0, "width": 100, "height": 100} | bbox
    return {"document": {"id": "0:0", "type": "DOCUMENT", "children": [
        {"id": "1:1", "name": "Screen", "type": "FRAME", "absoluteBoundingBox": box,
         "children": [{"id": "1:2", "name": "Box", "type": "RECTANGLE",
                       "absoluteBoundingBox": {"x": 1, "y": 2, "width": 3}}]}]}}


def test_missing_coordinates_zero_frame_and_nan(tmp_path):
    with pytest.raises(LayoutFileError, match=r"node 1:2 \(Box\) has no 'height'"):
        parse_layout(_frame_doc(), "a.json")
    with pytest.raises(LayoutFileError, match=r"a.json: zero-size frame 1:1 \(Screen\)"):
        parse_layout(_frame_doc(width=0), "a.json")
    nan = json.dumps(_frame_doc()).replace('"width": 3', '"width": 3, "height": NaN')
    path = tmp_path / "nan.json"
    path.write_text(nan)
    with pytest.raises(LayoutFileError, match=r"nan.json: non-finite coordinate .* 1:2"):
        load_layout(path)
    bad = _frame_doc()
    bad["document"]["children"][0]["children"][0]["absoluteBoundingBox"] = None
    with pytest.raises(LayoutFileError, match="absoluteBoundingBox=None"):
        parse_layout(bad, "a.json")
    with pytest.raises(LayoutFileError, match="cannot read"):
        load_layout(tmp_path / "missing.json")
