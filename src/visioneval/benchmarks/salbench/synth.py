"""A P3-style synthetic SalBench: search arrays where one object differs in one feature.

`write_synthetic(out_dir, n, seed)` writes the three P3 configs (`P3`, `P3_box`,
`P3_box_img`) as HF-style parquet files, so every code path that reads the real dataset can
run offline. Scene i is the same in all three configs; scene i depends only on (seed, i),
so a larger `n` extends a smaller one.

Each scene is a 384x384 PNG on a light background: a jittered grid of 20-60 objects of one
shape (bar, ellipse, triangle, L or arrow) around one base colour, size and angle, and a
target that differs in exactly one of orientation, color or size. Every scene has a
difficulty (in its image_id), balanced and independent of the class (`scene_difficulty`):

- easy: identical distractors; the target is rotated 45-90 degrees, hue-shifted 90-180
  degrees, or scaled x1.6-2.2 / x0.45-0.6.
- medium: the target is rotated 30-40 degrees, hue-shifted 40-60 degrees, or scaled
  x1.35-1.5 / x0.65-0.72; the distractors vary mildly (angle +/-3 degrees, hue +/-2
  degrees, size +/-3%).
- hard: near-threshold targets, rotated 10-15 degrees, hue-shifted 12-18 degrees, or scaled
  x1.1-1.15 / x0.86-0.9; the distractors vary in all three features (angle +/-3 degrees,
  hue +/-3 degrees, size +/-2.5%), and one feature per scene, drawn independently of the
  class, varies strongly (angle +/-18 degrees, hue +/-10 degrees, size x0.87-1.15).

The target's difference in its own feature is always at least `MIN_RATIO` (3) times the
largest distractor deviation in that feature (so when the strongly varying feature is the
target's own, its difference grows to match). Distractor deviations are symmetric around
the base values, so the target sits exactly at the distractors' median in its other two
features. Objects never use red hues, so the pure-red (255, 0, 0) box of `P3_box_img` is
unambiguous, and no object comes near the target's box.

With `target_absent=K`, the Detection config (`P3`) also gets K target-absent control scenes
after its n rows (`make_absent_scene`): the same drawing, every object identical in shape,
orientation, colour and size, the same question, and the answer "None" (no feature differs).
The Referring configs get none: their questions point at a target.
"""

from __future__ import annotations

import colorsys
import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw

from visioneval.benchmarks.salbench.parse import ABSENT_ANSWER
from visioneval.benchmarks.salbench.spec import CONFIGS as SPECS
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
DETECTION = tuple(c for c in CONFIGS if SPECS[c].task == "D")  # where absent scenes go
ABSENT_SUFFIX = "-absent"  # ends the image_id of a target-absent scene

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
class Level:
    """How far the target differs, and how much the distractors vary, at one difficulty.

    Target differences are (low, high) ranges: `turn` and `hue_shift` in degrees, `grow` and
    `shrink` as scale factors. `spread` is the distractors' largest deviation from the scene's
    base value per feature, in P3_CLASSES order: angle (degrees), hue (degrees), size
    (|log scale|). With `strong`, one feature per scene, drawn at random, varies up to its
    `strong` value instead. The target's difference is always at least `MIN_RATIO` times the
    spread of its own feature."""

    turn: tuple[float, float]
    hue_shift: tuple[float, float]
    grow: tuple[float, float]
    shrink: tuple[float, float]
    spread: tuple[float, float, float] = (0.0, 0.0, 0.0)
    strong: tuple[float, float, float] | None = None


DIFFICULTIES = ("easy", "medium", "hard")
# Bump when the scenes change: cached demo sets are keyed by it.
GENERATOR_VERSION = 2

LEVELS = {
    "easy": Level(turn=(45, 90), hue_shift=(90, 180), grow=(1.6, 2.2), shrink=(0.45, 0.6)),
    "medium": Level(turn=(30, 40), hue_shift=(40, 60), grow=(1.35, 1.5), shrink=(0.65, 0.72),
                    spread=(3.0, 2.0, 0.03)),
    "hard": Level(turn=(10, 15), hue_shift=(12, 18), grow=(1.1, 1.15), shrink=(0.86, 0.9),
                  spread=(3.0, 3.0, 0.025), strong=(18.0, 10.0, 0.14)),
}
MIN_RATIO = 3.0  # target difference / largest distractor deviation, in the target's feature
TAIL = 2.0  # distractor deviations: normal, sigma = spread / TAIL, redrawn past the spread


@dataclass(frozen=True)
class Scene:
    """One rendered scene; `bbox` is the target's tight box in pixels (x0, y0, x1, y1).

    `target` and `distractors` hold each object's (hue in degrees, log scale, angle in
    degrees), the values the scene was drawn with."""

    index: int
    feature: str
    difficulty: str
    shape: str
    angle: int
    n_objects: int
    bbox: tuple[float, float, float, float]
    image: Image.Image
    target: tuple[float, float, float]
    distractors: tuple[tuple[float, float, float], ...]

    @property
    def image_id(self) -> str:
        return (f"image_{self.shape}_{self.angle}_{self.feature}_{self.difficulty}_"
                f"{self.n_objects}_{self.index}")

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


def scene_difficulty(seed: int, index: int) -> str:
    """Balanced difficulties, independent of the class: each block of three scenes holds each
    difficulty once, and each block of nine holds every (class, difficulty) pair once (a
    random 3x3 Latin square over the block's three triples and the three classes)."""
    rng = np.random.default_rng((seed, 2, index // 9))
    rows, symbols = rng.permutation(3), rng.permutation(3)
    triple = (index % 9) // 3
    cls = P3_CLASSES.index(scene_feature(seed, index))
    return DIFFICULTIES[symbols[(rows[triple] + cls) % 3]]


def make_scene(seed: int, index: int) -> Scene:
    rng = np.random.default_rng((seed, 0, index))
    feature = scene_feature(seed, index)
    difficulty = scene_difficulty(seed, index)
    level = LEVELS[difficulty]
    shape = SHAPES[rng.integers(len(SHAPES))]
    symmetric = shape in ("rectangle", "ellipse")  # looks the same turned by 180 degrees
    angle = int(rng.integers(-6, 6) if symmetric else rng.integers(-12, 12)) * 15
    spread = dict(zip(P3_CLASSES, level.spread, strict=True))
    if level.strong is not None:
        strong = int(rng.integers(len(P3_CLASSES)))
        spread[P3_CLASSES[strong]] = level.strong[strong]
    background, sat, val = _palette(rng)
    hue, target_hue = _hues(rng, feature == "color", level, spread["color"])
    cells, cell = _grid(rng)
    length = 0.5 * cell
    target_angle, log_scale = float(angle), 0.0
    if feature == "orientation":
        target_angle += rng.choice([-1, 1]) * _difference(rng, level.turn, spread[feature])
    elif feature == "size":
        grow = rng.random() < 0.5
        lo, hi = np.log(level.grow) if grow else -np.log(level.shrink[::-1])
        log_scale = (1 if grow else -1) * _difference(rng, (lo, hi), spread[feature])
    scale = float(np.exp(log_scale))
    target_poly = _place(_rotate(_outline(shape, length * scale), target_angle), cells[0])
    base = _place(_rotate(_outline(shape, length), angle), np.zeros(2))
    # Worst-case movement of a base point under the largest size and angle deviation.
    slack = float(np.linalg.norm(base, axis=1).max()) * (
        np.expm1(spread["size"]) + np.radians(spread["orientation"]))
    centres = _distractor_centres(rng, base, cells[1:], cell, target_poly, slack)
    m = len(centres)
    hues = hue + _symmetric(rng, m, spread["color"])
    log_scales = _symmetric(rng, m, spread["size"])
    turns = _symmetric(rng, m, spread["orientation"])
    image = Image.new("RGB", (SIZE, SIZE), background)
    draw = ImageDraw.Draw(image)
    for centre, h, s, t in zip(centres, hues, log_scales, turns, strict=True):
        poly = _rotate(base, t) * np.exp(s) + centre
        draw.polygon([tuple(p) for p in poly], fill=_rgb(h, sat, val))
    draw.polygon([tuple(p) for p in target_poly], fill=_rgb(target_hue, sat, val))
    x0, y0 = target_poly.min(axis=0)
    x1, y1 = target_poly.max(axis=0)
    bbox = (float(x0), float(y0), float(x1), float(y1))
    distractors = tuple((float(h), float(s), angle + float(t))
                        for h, s, t in zip(hues, log_scales, turns, strict=True))
    return Scene(index, feature, difficulty, shape, angle, m + 1, bbox, image,
                 (float(target_hue), log_scale, float(target_angle)), distractors)


@dataclass(frozen=True)
class AbsentScene:
    """A target-absent control scene: `n_objects` copies of one object (shape, angle,
    colour and size), nothing differs; its answer is ABSENT_ANSWER."""

    index: int
    shape: str
    angle: int
    n_objects: int
    image: Image.Image

    @property
    def image_id(self) -> str:
        return (f"image_{self.shape}_{self.angle}_none_{self.n_objects}_{self.index}"
                f"{ABSENT_SUFFIX}")


def make_absent_scene(seed: int, index: int) -> AbsentScene:
    """Absent scene i: drawn as a present scene is (shape, angle, palette, jittered grid) from
    a random stream of its own, so adding absent scenes leaves every present scene as it
    was, and scene i depends only on (seed, i). Every occupied cell holds the same object."""
    rng = np.random.default_rng((seed, 3, index))
    shape = SHAPES[rng.integers(len(SHAPES))]
    symmetric = shape in ("rectangle", "ellipse")
    angle = int(rng.integers(-6, 6) if symmetric else rng.integers(-12, 12)) * 15
    background, sat, val = _palette(rng)
    hue = float(rng.uniform(*HUE_RANGE))
    cells, cell = _grid(rng)
    base = _place(_rotate(_outline(shape, 0.5 * cell), angle), np.zeros(2))
    room = np.maximum(0.0, cell / 2 - base.max(axis=0) - 2)
    image = Image.new("RGB", (SIZE, SIZE), background)
    draw = ImageDraw.Draw(image)
    colour = _rgb(hue, sat, val)
    for centre in cells:
        poly = base + centre + rng.uniform(-room, room)
        draw.polygon([tuple(p) for p in poly], fill=colour)
    return AbsentScene(index, shape, angle, len(cells), image)


def _difference(rng: np.random.Generator, span: tuple[float, float], spread: float) -> float:
    """The target's difference: drawn from `span`, but at least MIN_RATIO x the spread."""
    least = MIN_RATIO * spread
    value = float(rng.uniform(*span))
    return value if value >= least else least * float(rng.uniform(1.0, 1.2))


def _palette(rng: np.random.Generator) -> tuple[tuple[int, int, int], float, float]:
    """Background colour, and the saturation and value every object shares."""
    grey = int(rng.integers(232, 250))
    tint = rng.integers(-4, 5, size=3)
    red, green, blue = (int(v) for v in np.clip(grey + tint, 0, 255))
    return (red, green, blue), rng.uniform(0.55, 0.9), rng.uniform(0.5, 0.85)


def _hues(rng: np.random.Generator, differ: bool, level: Level,
          spread: float) -> tuple[float, float]:
    """The distractors' base hue and the target's; they differ only if `differ`. Both, and
    every distractor's hue (base +/- spread), stay inside HUE_RANGE."""
    low, high = HUE_RANGE
    hue = float(rng.uniform(low + spread, high - spread))
    if not differ:
        return hue, hue
    while True:
        target_hue = hue + rng.choice([-1, 1]) * _difference(rng, level.hue_shift, spread)
        if low <= target_hue <= high:
            return hue, float(target_hue)


def _rgb(hue: float, sat: float, val: float) -> tuple[int, int, int]:
    r, g, b = colorsys.hsv_to_rgb(hue / 360.0, sat, val)
    return round(r * 255), round(g * 255), round(b * 255)


def _symmetric(rng: np.random.Generator, m: int, spread: float) -> np.ndarray:
    """m deviations within +/- spread (normal with sigma = spread / TAIL, redrawn past the
    spread), in +/- pairs plus one or two zeros, shuffled: their median is exactly 0, also
    after any monotone map (such as exp for sizes)."""
    if m == 0 or spread == 0:
        return np.zeros(m)
    pairs = (m - 1) // 2
    mags = np.abs(rng.normal(0.0, spread / TAIL, pairs))
    while (over := mags > spread).any():
        mags[over] = np.abs(rng.normal(0.0, spread / TAIL, int(over.sum())))
    return rng.permutation(np.concatenate([mags, -mags, np.zeros(m - 2 * pairs)]))


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


def _distractor_centres(rng, base, centres, cell, target, slack) -> list[np.ndarray]:
    """Jittered distractor centres, each object inside its cell and none within reach of the
    target's box, whatever its size and angle variation (`slack` px at most)."""
    reach = BOX_MARGIN + BOX_WIDTH + 3 + slack
    lo, hi = target.min(axis=0) - reach, target.max(axis=0) + reach
    half = base.max(axis=0)  # base is centred on its box
    room = np.maximum(0.0, cell / 2 - half - 2 - slack)
    out = []
    for cell_centre in centres:
        centre = cell_centre + rng.uniform(-room, room)
        if np.all(centre + half >= lo) and np.all(centre - half <= hi):
            continue  # overlaps the target's clearance zone: leave the cell empty
        out.append(centre)
    return out


def _place(poly: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Move the polygon's box centre to `centre`."""
    lo, hi = poly.min(axis=0), poly.max(axis=0)
    return poly - (lo + hi) / 2 + centre


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
        angles = np.linspace(0, 2 * np.pi, 40, endpoint=False)
        return np.stack([L / 2 * np.cos(angles), 0.19 * L * np.sin(angles)], axis=1)
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


def write_synthetic(out_dir: Path, n: int, seed: int = 0, target_absent: int = 0
                    ) -> dict[str, int]:
    """Write `out_dir/{P3,P3_box,P3_box_img}/shard_00000.parquet`, n rows each (row i of
    every config is scene i), and after P3's n rows its `target_absent` control scenes; the
    same arguments give the same bytes. Returns rows per config."""
    if n < 0 or target_absent < 0:
        raise ValueError("n and target_absent must be >= 0")
    columns: dict[str, dict[str, list]] = {
        c: {"image": [], "question": [], "answer": [], "image_id": []} for c in CONFIGS}
    for index in range(n):
        scene = make_scene(seed, index)
        plain = _png(scene.image)
        for config in CONFIGS:
            data = _png(scene.boxed_image()) if config == "P3_box_img" else plain
            _append(columns[config], data, scene.question(config), scene.feature,
                    scene.image_id)
    for index in range(target_absent):
        absent = make_absent_scene(seed, index)
        data = _png(absent.image)
        for config in DETECTION:
            _append(columns[config], data, QUESTION_D, ABSENT_ANSWER, absent.image_id)
    counts = {}
    for config, col in columns.items():
        folder = Path(out_dir) / config
        folder.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pydict(col, schema=SCHEMA)
        pq.write_table(table, folder / "shard_00000.parquet", row_group_size=ROW_GROUP)
        counts[config] = table.num_rows
    return counts


def _append(columns: dict[str, list], image: bytes, question: str, answer: str,
            image_id: str) -> None:
    columns["image"].append({"bytes": image, "path": f"{image_id}.png"})
    columns["question"].append(question)
    columns["answer"].append(answer)
    columns["image_id"].append(image_id)


def cached_synthetic(cache_root: Path, n: int, seed: int) -> Path:
    """The demo's synthetic P3 set, generated once per (n, seed) and kept in the cache (a
    half-written set is never used: it is renamed into place when complete)."""
    target = cache_root / "demo" / f"salbench-synth-v{GENERATOR_VERSION}-n{n}-seed{seed}"
    if (target / "DONE").exists():
        return target
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    write_synthetic(tmp, n, seed)
    (tmp / "DONE").write_text("complete\n")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target
