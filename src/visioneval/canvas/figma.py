"""Figma REST JSON -> typed, normalised boxes.

The rules are CANVAS's reference loader's (`evaluation/layout/hungarian_iou.py`,
`load_boxes_from_json`, kixlab/canvas@b6681ee5), re-implemented:

- two file shapes: `{"document": DOCUMENT}` (GET /v1/files) and
  `{"nodes": {id: {"document": NODE}, ...}}` (GET /v1/files/:key/nodes; the first value);
- a node is kept when `visible` (default true), `opacity` (default 1) > 0.01 and it has an
  `absoluteBoundingBox`; the walk goes on into the children of dropped nodes too;
- `depth` counts from the root handed to the walk (the document, or the nodes entry) = 0;
- the frame = the first node, in depth-first pre-order, that has a bounding box and type
  FRAME or CANVAS (visible or not); every box is normalised to it:
  x' = (x - fx) / fw, y' = (y - fy) / fh, w' = w / fw, h' = h / fh.
  Render bounds (`absoluteRenderBounds`) are kept as they are, not normalised.

Where the reference would crash or silently divide by zero, we raise `LayoutFileError`
naming the file: not JSON, an unknown shape, no frame, a zero-size frame, a kept node whose
bounding box lacks a coordinate, non-finite (NaN/inf) coordinates, and a visible node whose
`opacity` is not a number (the string "0.5", null, true: CANVAS's `opacity > 0.01` raises
a TypeError on the first two and reads true as 1; we read none of them as a guess).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

FRAME_TYPES = ("FRAME", "CANVAS")
_COORDS = ("x", "y", "width", "height")


class LayoutFileError(ValueError):
    """A Figma JSON file that cannot be turned into boxes; the message names the file."""


@dataclass(frozen=True, slots=True)
class Box:
    """One kept node. x, y, w, h are normalised to the frame (0..1 inside it)."""

    id: str | None
    name: str
    type: str
    depth: int
    x: float
    y: float
    w: float
    h: float
    render: tuple[float, float, float, float] | None = None  # absolute, not normalised
    fill: tuple[float, float, float] | None = None  # first visible SOLID fill, RGB 0..1


@dataclass(slots=True)
class Layout:
    """The boxes of one file, also as arrays for the vectorised metrics.

    `xywh` is (N, 4) float64 in normalised units; `fills` is (N, 3) with NaN where a box
    has no solid fill; `root` is the index of the normalisation frame among the boxes (-1
    when the frame node itself was not kept, e.g. it is invisible)."""

    path: str
    boxes: list[Box]
    frame: tuple[float, float, float, float]  # absolute x, y, w, h
    root: int
    xywh: np.ndarray = field(repr=False)
    depth: np.ndarray = field(repr=False)
    fills: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return len(self.boxes)

    def without_root(self) -> np.ndarray:
        """Indices of every box but the normalisation frame."""
        idx = np.arange(len(self.boxes))
        return idx[idx != self.root]


def load_layout(path: str | Path) -> Layout:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LayoutFileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return parse_layout(raw, str(path))


def _loads(raw: bytes, where: str) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    # The standard library also reads NaN/Infinity (what Python's json.dump writes), so
    # such a file gets the precise "non-finite coordinate" error instead of "not JSON".
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise LayoutFileError(f"{where}: not JSON ({exc})") from None


def parse_layout(raw: bytes | str | dict, where: str = "<json>") -> Layout:
    data = raw if isinstance(raw, dict) else _loads(
        raw.encode() if isinstance(raw, str) else raw, where)
    if not isinstance(data, dict):
        raise LayoutFileError(f"{where}: expected a JSON object, got {type(data).__name__}")
    if "document" in data:
        root = data["document"]
    elif "nodes" in data:
        nodes = data["nodes"]
        if not isinstance(nodes, dict) or not nodes:
            raise LayoutFileError(f"{where}: 'nodes' is empty")
        first = next(iter(nodes.values()))
        if not isinstance(first, dict) or "document" not in first:
            raise LayoutFileError(f"{where}: the first 'nodes' entry has no 'document'")
        root = first["document"]
    else:
        raise LayoutFileError(f"{where}: neither 'document' nor 'nodes' at the top level "
                              "(not a Figma REST response)")
    if not isinstance(root, dict):
        raise LayoutFileError(f"{where}: the document is not an object")

    frame_node = _find_frame(root)
    if frame_node is None:
        raise LayoutFileError(f"{where}: no FRAME/CANVAS node with an absoluteBoundingBox")
    frame = _bbox(frame_node, where)
    fx, fy, fw, fh = frame
    if not all(map(math.isfinite, frame)):
        raise LayoutFileError(f"{where}: non-finite coordinate in the frame "
                              f"{_label(frame_node)}")
    if fw <= 0 or fh <= 0:
        raise LayoutFileError(f"{where}: zero-size frame {_label(frame_node)} "
                              f"({fw:g} x {fh:g})")

    kept: list[tuple[dict, int]] = []
    _walk(root, 0, kept, where)
    boxes: list[Box] = []
    coords = np.empty((len(kept), 4), dtype=np.float64)
    fills = np.full((len(kept), 3), np.nan)
    root_index = -1
    for i, (node, depth) in enumerate(kept):
        x, y, w, h = _bbox(node, where)
        coords[i] = (x, y, w, h)
        if node is frame_node:
            root_index = i
        fill = _solid_fill(node)
        if fill is not None:
            fills[i] = fill
        boxes.append(Box(
            id=None if node.get("id") is None else str(node.get("id")),
            name=str(node.get("name", "unknown")), type=str(node.get("type", "unknown")),
            depth=depth, x=(x - fx) / fw, y=(y - fy) / fh, w=w / fw, h=h / fh,
            render=_render(node), fill=fill))
    bad = ~np.isfinite(coords).all(axis=1)
    if bad.any():
        node = kept[int(np.argmax(bad))][0]
        raise LayoutFileError(f"{where}: non-finite coordinate (NaN or inf) in node "
                              f"{_label(node)}")
    xywh = (coords - np.array([fx, fy, 0.0, 0.0])) / np.array([fw, fh, fw, fh])
    return Layout(path=where, boxes=boxes, frame=frame, root=root_index, xywh=xywh,
                  depth=np.array([d for _, d in kept], dtype=np.int64), fills=fills)


def _label(node: dict) -> str:
    return f"{node.get('id', '?')} ({node.get('name', 'unnamed')!s})"


def _find_frame(node: Any) -> dict | None:
    """The first FRAME/CANVAS with a bounding box, depth-first pre-order (iterative)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if not isinstance(current, dict):
            continue
        if "absoluteBoundingBox" in current and current.get("type") in FRAME_TYPES:
            return current
        children = current.get("children")
        if isinstance(children, list):
            stack.extend(reversed(children))
    return None


def _walk(node: Any, depth: int, out: list[tuple[dict, int]], where: str) -> None:
    stack = [(node, depth)]
    while stack:
        current, d = stack.pop()
        if not isinstance(current, dict):
            continue
        visible = current.get("visible", True)
        opacity = current.get("opacity", 1.0)
        # As in CANVAS's loader, opacity is only looked at for a visible node.
        if visible and (isinstance(opacity, bool) or not isinstance(opacity, int | float)):
            raise LayoutFileError(f"{where}: node {_label(current)} has opacity {opacity!r}, "
                                  "not a number")
        if visible and opacity > 0.01 and "absoluteBoundingBox" in current:
            out.append((current, d))
        children = current.get("children")
        if isinstance(children, list):
            stack.extend((c, d + 1) for c in reversed(children))


def _bbox(node: dict, where: str) -> tuple[float, float, float, float]:
    box = node.get("absoluteBoundingBox")
    if not isinstance(box, dict):
        raise LayoutFileError(f"{where}: node {_label(node)} has absoluteBoundingBox="
                              f"{box!r}, not an object with x, y, width, height")
    values = []
    for key in _COORDS:
        value = box.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            what = "no" if value is None else f"a non-numeric ({value!r})"
            raise LayoutFileError(f"{where}: node {_label(node)} has {what} '{key}' in its "
                                  "absoluteBoundingBox")
        values.append(float(value))
    return values[0], values[1], values[2], values[3]


def _render(node: dict) -> tuple[float, float, float, float] | None:
    box = node.get("absoluteRenderBounds")
    if not isinstance(box, dict):
        return None
    try:
        values = tuple(float(box[k]) for k in _COORDS)
    except (KeyError, TypeError, ValueError):
        return None
    return values if all(map(math.isfinite, values)) else None  # type: ignore[return-value]


def _solid_fill(node: dict) -> tuple[float, float, float] | None:
    """The first visible SOLID paint of `fills` (Figma colours are 0..1 floats)."""
    fills = node.get("fills")
    if not isinstance(fills, list):
        return None
    for paint in fills:
        if not isinstance(paint, dict) or paint.get("type") != "SOLID":
            continue
        if paint.get("visible", True) is False:
            continue
        color = paint.get("color")
        if not isinstance(color, dict):
            continue
        try:
            rgb = (float(color["r"]), float(color["g"]), float(color["b"]))
        except (KeyError, TypeError, ValueError):
            continue
        if all(map(math.isfinite, rgb)):
            return rgb
    return None
