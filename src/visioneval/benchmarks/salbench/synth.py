"""A P3-style synthetic SalBench: search arrays where one object differs in one feature.

`write_synthetic(out_dir, n, seed)` writes the three P3 configs (`P3`, `P3_box`,
`P3_box_img`) as HF-style parquet files, so every code path that reads the real dataset can
run offline. Scene i is the same in all three configs; scene i depends only on (seed, i),
so a larger `n` extends a smaller one.

Each scene is a 384x384 PNG on a light background: a jittered grid of 20-60 copies of one
shape (bar, ellipse, triangle, L or arrow), one colour, one size, one angle, except the
target, which differs in exactly one of orientation (rotated 30-90 degrees), color (hue
shifted 40-180 degrees) or size (x1.35-2.2 or x0.45-0.72). About a third of the scenes use
the smaller differences. Objects never use red hues, so the pure-red (255, 0, 0) box of
`P3_box_img` is unambiguous, and no object comes near the target's box.
"""

from __future__ import annotations

import colorsys
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw

from visioneval.benchmarks.salbench.spec import P3_CLASSES

SIZE = 384
MARGIN = 16  # free border around the grid, room for a big target and its red box
BOX_MARGIN = 4  # px between the target and the red box
BOX_WIDTH = 3
RED = (255, 0, 0)
SHAPES = ("rectangle", "ellipse", "triangle", "lshape", "arrow")
HUE_RANGE = (30.0, 330.0)  # degrees; red and its neighbours are never used
ROW_GROUP = 64
CONFIGS = ("P3", "P3_box", "P3_box_img")

QUESTION_D = (
    "Context: Given this list of low level visual features defined according to feature "
    "integration theory: Orientation, Color, Size. Task: Examine this image and identify the "
    "feature that makes one object notably different from the others. Answer the question "
    "using a single word or phrase.")
QUESTION_R = (
    "Context: This image depicts a scene with  {n_objects} objects. Among those, one object at "
    "location given by this bounding box x_min={x0:.2f}, y_min={y0:.2f}, x_max={x1:.2f}, "
    "y_max={y1:.2f}, is different from the others. Given this list of low level visual "
    "features defined according to feature integration theory: Orientation, Color and Size. "
    "Identify how the special object differs from the rest. Answer the question using a "
    "single word or phrase.")
QUESTION_VR = (
    "Context: This image depicts a scene with many similar objects. Among those, one object "
    "highlighted in a red box is different from the others. Task: Given this list of low "
    "level visual features defined according to Feature Integration Theory: size, color, "
    "orientation. In which way does the special object differ from the rest. Answer the "
    "question using a single word or phrase.")

HF_FEATURES = {
    "image": {"_type": "Image"},
    "question": {"dtype": "string", "_type": "Value"},
    "answer": {"dtype": "string", "_type": "Value"},
    "image_id": {"dtype": "string", "_type": "Value"},
}
SCHEMA = pa.schema(
    [("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
     ("question", pa.string()), ("answer", pa.string()), ("image_id", pa.string())],
    metadata={b"huggingface": json.dumps({"info": {"features": HF_FEATURES}}).encode()},
)


@dataclass(frozen=True)
class Scene:
    """One rendered scene; `bbox` is the target's tight box in pixels (x0, y0, x1, y1)."""

    index: int
    feature: str
    shape: str
    angle: int
    n_objects: int
    bbox: tuple[float, float, float, float]
    image: Image.Image

    @property
    def image_id(self) -> str:
        return f"image_{self.shape}_{self.angle}_{self.feature}_{self.n_objects}_{self.index}"

    def boxed_image(self) -> Image.Image:
        """The scene with a pure-red outline around the target (the Visual Referring image)."""
        out = self.image.copy()
        x0, y0, x1, y1 = self.bbox
        m = BOX_MARGIN + BOX_WIDTH
        box = [round(x0) - m, round(y0) - m, round(x1) + m, round(y1) + m]
        ImageDraw.Draw(out).rectangle(box, outline=RED, width=BOX_WIDTH)
        return out

    def question(self, config: str) -> str:
        if config == "P3":
            return QUESTION_D
        if config == "P3_box":
            x0, y0, x1, y1 = self.bbox
            return QUESTION_R.format(n_objects=self.n_objects, x0=x0 / SIZE, y0=y0 / SIZE,
                                     x1=x1 / SIZE, y1=y1 / SIZE)
        if config == "P3_box_img":
            return QUESTION_VR
        raise ValueError(f"unknown config {config}; choose from {', '.join(CONFIGS)}")


def scene_feature(seed: int, index: int) -> str:
    """Balanced classes: each block of three scenes holds each class once, in random order."""
    order = np.random.default_rng((seed, 1, index // 3)).permutation(len(P3_CLASSES))
    return P3_CLASSES[order[index % 3]]


def make_scene(seed: int, index: int) -> Scene:
    rng = np.random.default_rng((seed, 0, index))
    feature = scene_feature(seed, index)
    hard = rng.random() < 0.3
    shape = SHAPES[rng.integers(len(SHAPES))]
    symmetric = shape in ("rectangle", "ellipse")  # looks the same turned by 180 degrees
    angle = int(rng.integers(-6, 6) if symmetric else rng.integers(-12, 12)) * 15
    background, colour, target_colour = _colours(rng, feature == "color", hard)
    cells, cell = _grid(rng)
    length = 0.5 * cell
    target_angle, scale = angle, 1.0
    if feature == "orientation":
        turn = rng.uniform(*((30, 40) if hard else (45, 90)))
        target_angle = angle + int(rng.choice([-1, 1]) * turn)
    elif feature == "size":
        grow = rng.random() < 0.5
        span = ((1.35, 1.5) if grow else (0.65, 0.72)) if hard else \
            ((1.6, 2.2) if grow else (0.45, 0.6))
        scale = rng.uniform(*span)
    target_poly = _place(_rotate(_outline(shape, length * scale), target_angle), cells[0])
    polygons = _distractors(rng, shape, length, angle, cells[1:], cell, target_poly)
    image = Image.new("RGB", (SIZE, SIZE), background)
    draw = ImageDraw.Draw(image)
    for poly in polygons:
        draw.polygon([tuple(p) for p in poly], fill=colour)
    draw.polygon([tuple(p) for p in target_poly], fill=target_colour)
    x0, y0 = target_poly.min(axis=0)
    x1, y1 = target_poly.max(axis=0)
    bbox = (float(x0), float(y0), float(x1), float(y1))
    return Scene(index, feature, shape, angle, len(polygons) + 1, bbox, image)


def _colours(rng: np.random.Generator, differ: bool, hard: bool):
    """Background, distractor and target colours; the target differs in hue only if `differ`."""
    grey = int(rng.integers(232, 250))
    tint = rng.integers(-4, 5, size=3)
    background = tuple(int(v) for v in np.clip(grey + tint, 0, 255))
    sat, val = rng.uniform(0.55, 0.9), rng.uniform(0.5, 0.85)
    low, high = HUE_RANGE
    hue = rng.uniform(low, high)
    target_hue = hue
    if differ:
        span = (40, 60) if hard else (90, 180)
        while True:
            target_hue = hue + rng.choice([-1, 1]) * rng.uniform(*span)
            if low <= target_hue <= high:
                break

    def rgb(h: float) -> tuple[int, int, int]:
        r, g, b = colorsys.hsv_to_rgb(h / 360.0, sat, val)
        return round(r * 255), round(g * 255), round(b * 255)

    return background, rgb(hue), rgb(target_hue)


def _grid(rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Centres of 28-60 occupied grid cells (the target's first) and the cell size."""
    while True:
        rows, cols = (int(v) for v in rng.integers(5, 9, size=2))
        if rows * cols >= 30:
            break
    cell = (SIZE - 2 * MARGIN) / max(rows, cols)
    ys, xs = np.mgrid[0:rows, 0:cols]
    offset = (SIZE - np.array([cols, rows]) * cell) / 2
    centres = np.stack([xs.ravel(), ys.ravel()], axis=1) * cell + cell / 2 + offset
    count = int(rng.integers(28, min(rows * cols, 60) + 1))
    return centres[rng.permutation(len(centres))[:count]], cell


def _distractors(rng, shape, length, angle, centres, cell, target) -> list[np.ndarray]:
    """Jittered distractors, each inside its cell; none within reach of the target's box."""
    base = _rotate(_outline(shape, length), angle)
    reach = BOX_MARGIN + BOX_WIDTH + 3
    lo, hi = target.min(axis=0) - reach, target.max(axis=0) + reach
    out = []
    for centre in centres:
        poly = _place(base, centre, cell, rng)
        if np.all(poly.max(axis=0) >= lo) and np.all(poly.min(axis=0) <= hi):
            continue  # overlaps the target's clearance zone: leave the cell empty
        out.append(poly)
    return out


def _place(poly: np.ndarray, centre: np.ndarray, cell: float = 0.0,
           rng: np.random.Generator | None = None) -> np.ndarray:
    """Move the polygon's box centre to `centre`; with a cell and rng, jitter it randomly but
    keep it inside its cell."""
    lo, hi = poly.min(axis=0), poly.max(axis=0)
    moved = poly - (lo + hi) / 2 + centre
    if rng is not None:
        room = np.maximum(0.0, (cell - (hi - lo)) / 2 - 2)
        moved = moved + rng.uniform(-room, room)
    return moved


def _rotate(poly: np.ndarray, degrees: float) -> np.ndarray:
    t = np.deg2rad(degrees)  # counter-clockwise on screen (y points down)
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    return poly @ rot


def _outline(shape: str, length: float) -> np.ndarray:
    """The shape's polygon, long axis along x, `length` long, roughly centred on 0."""
    L = length
    if shape == "rectangle":
        w = 0.35 * L
        pts = [(-L / 2, -w / 2), (L / 2, -w / 2), (L / 2, w / 2), (-L / 2, w / 2)]
    elif shape == "ellipse":
        t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
        return np.stack([L / 2 * np.cos(t), 0.19 * L * np.sin(t)], axis=1)
    elif shape == "triangle":
        pts = [(L / 2, 0.0), (-L / 2, -0.28 * L), (-L / 2, 0.28 * L)]
    elif shape == "lshape":
        t, s = 0.28 * L, 0.5 * L
        pts = [(0, 0), (L, 0), (L, t), (t, t), (t, s), (0, s)]
        pts = [(x - L / 2, y - s / 2) for x, y in pts]
    elif shape == "arrow":
        h, w, neck = 0.12 * L, 0.3 * L, 0.12 * L
        pts = [(-L / 2, -h), (neck, -h), (neck, -w), (L / 2, 0.0), (neck, w), (neck, h),
               (-L / 2, h)]
    else:
        raise ValueError(f"unknown shape {shape}")
    return np.array(pts, dtype=float)


def _png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def write_synthetic(out_dir: Path, n: int, seed: int = 0) -> dict[str, int]:
    """Write `out_dir/{P3,P3_box,P3_box_img}/shard_00000.parquet`, n rows each (row i of
    every config is scene i); the same seed gives the same bytes. Returns rows per config."""
    if n < 0:
        raise ValueError("n must be >= 0")
    columns: dict[str, dict[str, list]] = {
        c: {"image": [], "question": [], "answer": [], "image_id": []} for c in CONFIGS}
    for index in range(n):
        scene = make_scene(seed, index)
        plain = _png(scene.image)
        for config in CONFIGS:
            data = _png(scene.boxed_image()) if config == "P3_box_img" else plain
            col = columns[config]
            col["image"].append({"bytes": data, "path": f"{scene.image_id}.png"})
            col["question"].append(scene.question(config))
            col["answer"].append(scene.feature)
            col["image_id"].append(scene.image_id)
    counts = {}
    for config, col in columns.items():
        folder = Path(out_dir) / config
        folder.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pydict(col, schema=SCHEMA)
        pq.write_table(table, folder / "shard_00000.parquet", row_group_size=ROW_GROUP)
        counts[config] = table.num_rows
    return counts
