"""The pass-rate chart of `visioneval evaluate`: every evaluator's label legible, none
overlapping another, however many evaluators and however long their names."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from visioneval.report import charts

LABELS = ["judge:image-description", "judge:structured-output", "validator:count",
          "validator:chart", "validator:ocr", "validator:json",
          "script:python3 mentions_shelf.py", "validator:count@0.5",
          "script:uv run --with numpy /home/someone/evaluators/check_the_chart_figures.py"]
NS = {"s": "http://www.w3.org/2000/svg"}


def _label_boxes(svg: str) -> list[tuple[str, float, float, float, float]]:
    """(text, left, top, right, bottom) of each y label, from the SVG's own coordinates and
    the chart's width estimate; labels are right-aligned (text-anchor end) at x."""
    root = ET.fromstring(svg)
    boxes = []
    for text in root.iterfind("s:text", NS):
        if text.get("text-anchor") != "end" or text.get("font-size") != "8":
            continue
        lines = [t.text or "" for t in text.iterfind("s:tspan", NS)] or [text.text or ""]
        x, y = float(text.get("x")), float(text.get("y"))
        half = len(lines) * 8 * 1.2 / 2
        width = max(charts.text_width(line, 8) for line in lines)
        boxes.append((" ".join(lines), x - width, y - half, x, y + half))
    return boxes


def test_evaluator_labels_do_not_overlap():
    svg = charts.evaluator_bars(LABELS, [50.0, None, 100.0, 0.0, 75.0, 12.5, 33.3, 100.0,
                                         80.0], "pass rate (errors excluded)")
    boxes = _label_boxes(svg)
    assert {LABELS[0], LABELS[6]} <= {b[0] for b in boxes} and len(boxes) == len(LABELS)
    assert boxes[-1][0].endswith("…")  # three lines' worth: two, then an ellipsis
    for (_, _, _, _, bottom), (_, _, top, _, _) in zip(boxes, boxes[1:], strict=False):
        assert bottom <= top  # rows in order, none over the next
    assert all(left >= 0 for _, left, _, _, _ in boxes)  # inside the picture
    root = ET.fromstring(svg)
    assert float(root.get("height")) >= boxes[-1][4]
    svg = charts.evaluator_bars(LABELS, [50.0] * len(LABELS), "t")
    assert svg.startswith("<svg") and "judge:image-description" in svg and "n/a" not in svg
