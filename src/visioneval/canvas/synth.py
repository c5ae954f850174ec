"""CANVAS-shaped directories made by code: for tests, the speed benchmark and trying the
command without the real data.

A design is a tree of `Node`s in absolute design pixels; it becomes a Figma REST JSON
(`document` shape as GET /v1/files returns it, or `nodes` shape as GET
/v1/files/:key/nodes), a PNG render (the boxes filled in tree order on white), and, for a
generated design, the agent's `-json-response.json` (assistant tool calls and their tool
messages, each call appearing in both: what the reference double-counts).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image as PILImage
from PIL import ImageDraw


@dataclass
class Node:
    name: str
    type: str
    x: float
    y: float
    w: float
    h: float
    fill: tuple[float, float, float] | None = None  # RGB 0..1
    visible: bool = True
    opacity: float = 1.0
    children: list[Node] = field(default_factory=list)
    id: str | None = None

    def add(self, *children: Node) -> Node:
        self.children.extend(children)
        return self


def frame(w: float, h: float, *children: Node, name: str = "Screen", x: float = 0.0,
          y: float = 0.0, fill: tuple[float, float, float] | None = (1.0, 1.0, 1.0)) -> Node:
    return Node(name, "FRAME", x, y, w, h, fill=fill, children=list(children))


def rect(name: str, x: float, y: float, w: float, h: float,
         fill: tuple[float, float, float] | None = None, type: str = "RECTANGLE",
         **kw: Any) -> Node:
    return Node(name, type, x, y, w, h, fill=fill, **kw)


def _assign_ids(node: Node, counter: list[int]) -> None:
    if node.id is None:
        counter[0] += 1
        node.id = f"1:{counter[0]}"
    for child in node.children:
        _assign_ids(child, counter)


def node_json(node: Node) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": node.id, "name": node.name, "type": node.type,
        "absoluteBoundingBox": {"x": node.x, "y": node.y, "width": node.w, "height": node.h},
        "absoluteRenderBounds": {"x": node.x, "y": node.y, "width": node.w, "height": node.h},
    }
    if not node.visible:
        out["visible"] = False
    if node.opacity != 1.0:
        out["opacity"] = node.opacity
    if node.fill is not None:
        r, g, b = node.fill
        out["fills"] = [{"blendMode": "NORMAL", "type": "SOLID",
                         "color": {"r": r, "g": g, "b": b, "a": 1.0}}]
    else:
        out["fills"] = []
    if node.children:
        out["children"] = [node_json(c) for c in node.children]
    return out


def figma_json(root: Node, shape: str = "document") -> dict[str, Any]:
    """The Figma REST response for a design whose root is `root` (a FRAME)."""
    _assign_ids(root, [1])
    if shape == "nodes":
        return {"name": "design", "nodes": {root.id: {"document": node_json(root),
                                                       "components": {}, "styles": {}}}}
    if shape != "document":
        raise ValueError(f"unknown shape {shape!r}")
    return {"name": "design", "document": {
        "id": "0:0", "name": "Document", "type": "DOCUMENT",
        "children": [{"id": "0:1", "name": "Page 1", "type": "CANVAS",
                      "backgroundColor": {"r": 0.96, "g": 0.96, "b": 0.96, "a": 1},
                      "children": [node_json(root)]}]}}


def render(root: Node, scale: float = 1.0) -> PILImage.Image:
    """The design drawn as Figma would roughly show it: fills in tree order on white."""
    width, height = max(1, round(root.w * scale)), max(1, round(root.h * scale))
    image = PILImage.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)

    def paint(node: Node) -> None:
        if not node.visible or node.opacity <= 0.01:
            return
        if node.fill is not None:
            x0 = (node.x - root.x) * scale
            y0 = (node.y - root.y) * scale
            x1, y1 = x0 + node.w * scale - 1, y0 + node.h * scale - 1
            if x1 >= x0 and y1 >= y0:
                colour = tuple(round(255 * c) for c in node.fill)
                draw.rectangle([x0, y0, x1, y1], fill=colour)
        for child in node.children:
            paint(child)

    paint(root)
    return image


def tool_response(calls: Sequence[str], step_count: int | None = None,
                  answered: bool = True) -> dict[str, Any]:
    """The agent server's response: one assistant message per call, each followed by
    its tool message (unless `answered` is False), as langchain's message_to_dict."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": {"type": "human", "data": {"content": "Design this."}},
         "id": "m0"}]
    for i, name in enumerate(calls):
        call_id = f"call_{i}"
        messages.append({"role": "assistant", "id": f"a{i}", "content": {"type": "ai", "data": {
            "content": "", "tool_calls": [{"name": name, "args": {}, "id": call_id,
                                           "type": "tool_call"}]}}})
        if answered:
            messages.append({"role": "tool", "id": f"t{i}", "content": {"type": "tool", "data": {
                "content": "ok", "name": name, "tool_call_id": call_id}}})
    messages.append({"role": "assistant", "id": "final",
                     "content": {"type": "ai", "data": {"content": "Done.", "tool_calls": []}}})
    out: dict[str, Any] = {"response": "Done.",
                           "json_response": {"main_content": "Done.", "messages": messages,
                                             "images": []}}
    out["step_count"] = len(messages) - 1 if step_count is None else step_count
    return out


def write_gt(base: Path, gid: str, design: Node, shape: str = "nodes",
             expected_tools: Sequence[str] | None = None, compress_level: int = 6) -> None:
    gt_dir = base / "benchmarks" / "generation_gt"
    gt_dir.mkdir(parents=True, exist_ok=True)
    (gt_dir / f"{gid}.json").write_text(json.dumps(figma_json(design, shape)))
    render(design).save(gt_dir / f"{gid}.png", compress_level=compress_level)
    if expected_tools is not None:
        (gt_dir / f"{gid}-expected-tools.json").write_text(json.dumps(list(expected_tools)))


def write_gen(base: Path, gid: str, design: Node, model: str = "gpt-4o",
              variant: str = "image_only", shape: str = "document",
              calls: Sequence[str] | None = ("create_frame", "create_rectangle"),
              step_count: int | None = None, hierarchy_name: bool = True,
              compress_level: int = 6) -> Path:
    folder_name = f"{gid}-{model}-{variant}"
    folder = base / "results" / "generation_gen" / model / variant / folder_name
    folder.mkdir(parents=True, exist_ok=True)
    suffix = "-figma-hierarchy.json" if hierarchy_name else ".json"
    (folder / f"{folder_name}{suffix}").write_text(json.dumps(figma_json(design, shape)))
    render(design).save(folder / f"{folder_name}.png", compress_level=compress_level)
    if calls is not None:
        (folder / f"{folder_name}-json-response.json").write_text(
            json.dumps(tool_response(calls, step_count)))
    return folder


# ---------------------------------------------------------------- random designs

PALETTE = [(0.20, 0.40, 0.85), (0.93, 0.35, 0.30), (0.20, 0.70, 0.45), (0.98, 0.75, 0.20),
           (0.55, 0.35, 0.75), (0.15, 0.15, 0.18), (0.85, 0.87, 0.90), (0.60, 0.62, 0.66)]
TOOLS = ["create_frame", "create_rectangle", "create_text", "set_fill_color",
         "set_corner_radius", "move_node", "resize_node"]


def random_design(rng: random.Random, boxes: int = 80, width: int = 1024,
                  height: int = 768) -> Node:
    """A screen of sections with children on shared columns, so alignment groups exist."""
    root = frame(width, height, fill=(0.98, 0.98, 0.99))
    sections = max(1, boxes // 20)
    per_section = max(1, (boxes - 1 - sections) // sections)
    section_h = height / sections
    columns = [24 + i * (width - 48) / 6 for i in range(6)]
    made = 1
    for s in range(sections):
        y0 = s * section_h
        section = rect(f"Section {s}", 12, y0 + 6, width - 24, section_h - 12,
                       fill=PALETTE[6], type="FRAME")
        root.add(section)
        made += 1
        for i in range(per_section):
            if made >= boxes:
                break
            col = rng.choice(columns)
            w = rng.choice([60, 90, 120, 160, 240])
            h = rng.choice([16, 24, 32, 48])
            y = y0 + 14 + (i % 8) * (section_h - 40) / 8
            kind = rng.choice(["TEXT", "RECTANGLE", "RECTANGLE", "TEXT", "ELLIPSE"])
            section.add(rect(f"{kind.title()} {s}.{i}", col, y, min(w, width - col - 16), h,
                             fill=rng.choice(PALETTE[:6]), type=kind))
            made += 1
    return root


def perturb(design: Node, rng: random.Random, jitter: float = 6.0, drop: float = 0.1,
            recolour: float = 0.2) -> Node:
    """A 'generated' version: boxes moved a little, some dropped, some recoloured."""
    def copy(node: Node, depth: int) -> Node | None:
        if depth >= 2 and rng.random() < drop:
            return None
        moved = Node(node.name, node.type,
                     node.x + (rng.gauss(0, jitter) if depth else 0.0),
                     node.y + (rng.gauss(0, jitter) if depth else 0.0),
                     node.w, node.h,
                     fill=rng.choice(PALETTE) if node.fill is not None and depth >= 2
                     and rng.random() < recolour else node.fill)
        moved.children = [c for c in (copy(ch, depth + 1) for ch in node.children) if c]
        return moved

    return copy(design, 0)  # type: ignore[return-value]


def write_random(base: Path, n: int, boxes: int = 80, width: int = 1024, height: int = 768,
                 seed: int = 0, model: str = "gpt-4o", variant: str = "image_only",
                 compress_level: int = 1) -> list[str]:
    """n random GT designs and a perturbed generated version of each; returns the ids."""
    rng = random.Random(seed)
    ids = []
    for i in range(n):
        gid = f"gid{i // 100}-{i % 100}"
        gt = random_design(rng, boxes, width, height)
        calls = [rng.choice(TOOLS) for _ in range(rng.randint(10, 40))]
        write_gt(base, gid, gt, shape="nodes", expected_tools=calls[: len(calls) // 2],
                 compress_level=compress_level)
        write_gen(base, gid, perturb(gt, rng), model, variant, calls=calls,
                  compress_level=compress_level)
        ids.append(gid)
    return ids
