"""A small IllusionBench-shaped dataset for tests and offline runs.

`write_synthetic(out_dir, n, seed)` writes `out_dir/data/Illusion_<SUBSET>-00000-of-00001.parquet`
for ICON, LOGO and IN: columns `image_name` and `image` (HF Image struct), as the Hub stores
them. Names follow the real patterns with the file names' spellings (`stationary`, `benz`,
`paper_clip`). Row i of a subset has shape class i mod the class count (so n >= 21 covers
every class of every subset), both difficulties alternate within each class, and the scene,
strength, id and ICON index come from a generator seeded by (seed, subset, i).

Each image is a 64x64 PNG: the shape's silhouette (one of eight simple masks, by class)
drawn as a striped texture in the scene's colour on a background of the same colour striped
the other way; Hard images have less contrast. They are valid images, nothing more: no model
should be expected to recognise the classes."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from visioneval.benchmarks.illusionbench.spec import (
    DIFFICULTIES,
    FILE_SHAPES,
    SCENES,
    STRENGTHS,
    SUBSETS,
    split_name,
)
from visioneval.io.parquet import write_hf_parquet

SIZE = 64
# A colour per scene, in SCENES order (ocean blue, origami paper, forest green, ...).
SCENE_COLOURS = ((30, 90, 160), (230, 200, 150), (40, 110, 50), (200, 210, 225),
                 (210, 180, 110), (120, 100, 80), (110, 110, 120), (60, 120, 120),
                 (170, 150, 130), (190, 90, 50), (200, 60, 120))


def image_name(subset: str, shape: str, scene: str, difficulty: str, strength: float,
               ident: int, index: int) -> str:
    """A name in the subset's real pattern (names.py)."""
    head = f"{shape}-{index}" if subset == "ICON" else shape
    return f"{head}-{scene}-{difficulty}-{strength:g}-{ident}.png"


def make_row(subset: str, i: int, seed: int) -> dict:
    shapes = FILE_SHAPES[subset]
    rng = np.random.default_rng((seed, SUBSETS.index(subset), i))
    class_index = i % len(shapes)
    difficulty = DIFFICULTIES[(i + i // len(shapes)) % 2]
    scene_index = int(rng.integers(len(SCENES)))
    strength = float(rng.choice(STRENGTHS[difficulty]))
    name = image_name(subset, shapes[class_index], SCENES[scene_index], difficulty, strength,
                      ident=i, index=int(rng.integers(1, 6)))
    png = render(class_index, SCENE_COLOURS[scene_index], difficulty == "Hard", rng)
    return {"image_name": name, "image": {"bytes": png, "path": name}}


def render(class_index: int, colour: tuple[int, int, int], hard: bool,
           rng: np.random.Generator) -> bytes:
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    mask = _mask(class_index % 8, (xx - SIZE / 2) / (SIZE / 2), (yy - SIZE / 2) / (SIZE / 2))
    base = np.array(colour, dtype=float)
    contrast = 18.0 if hard else 60.0
    background = base + np.where(((xx + yy) // 4) % 2 == 0, 12.0, -12.0)[..., None]
    figure = base - contrast + np.where(((xx - yy) // 4) % 2 == 0, 10.0, -10.0)[..., None]
    pixels = np.where(mask[..., None], figure, background) + rng.normal(0, 3, (SIZE, SIZE, 3))
    buf = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def _mask(kind: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Eight simple silhouettes on [-1, 1]^2: disc, square, triangle, diamond, cross, ring,
    star, bar."""
    r = np.hypot(x, y)
    masks = (r < 0.6, (abs(x) < 0.5) & (abs(y) < 0.5), (y < 0.5) & (y > 2 * abs(x) - 0.7),
             abs(x) + abs(y) < 0.7, ((abs(x) < 0.2) | (abs(y) < 0.2)) & (r < 0.7),
             (r < 0.7) & (r > 0.4), r < 0.35 + 0.3 * np.cos(5 * np.arctan2(y, x)) ** 2,
             (abs(y) < 0.2) & (abs(x) < 0.8))
    return masks[kind]


def write_synthetic(out_dir: Path, n: int, seed: int = 0) -> dict[str, Path]:
    """Write n rows per subset; the same (n, seed) gives the same bytes. Returns the files."""
    if n < 1:
        raise ValueError("n must be >= 1")
    files = {}
    for subset in SUBSETS:
        path = Path(out_dir) / "data" / f"{split_name(subset)}-00000-of-00001.parquet"
        write_hf_parquet(path, [make_row(subset, i, seed) for i in range(n)], ["image"])
        files[subset] = path
    return files
