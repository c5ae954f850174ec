"""Seeded odd-one-out arrays (SalBench's P3 look): elongated ellipses on a jittered grid, one
target differing from identical distractors in one feature by a controlled magnitude.

Rendering: a 512 x 512 sRGB PNG (8 bits per channel), drawn at 4x and box-averaged, so edges
are anti-aliased and interiors keep their exact colour; objects at CIELAB L* = 65, C* = 35 on
a neutral grey at L* = 85; the distractors' ellipse is 24 x 7.2 px. Every object stays inside
its own grid cell (a disc around its centre), so no two objects touch. A stimulus depends
only on its `Trial`, random seed included."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from visioneval.benchmarks.psychophysics import colour
from visioneval.benchmarks.psychophysics.params import (
    CHOICE_EXPERIMENTS,
    CONJUNCTION,
    UNITS,
    Experiment,
    Feature,
    StimulusParams,
    png_info,
)

IMAGE_SIZE = 512
SUPERSAMPLE = 4
MARGIN = 16  # px of free border around the grid
LENGTH = 24.0  # px, the distractors' long axis
ASPECT = 0.3  # short axis / long axis
GAP = 2.0  # px kept free between an object and its cell's edge
CONJUNCTION_DEG = 30.0  # orientation difference of a conjunction target
SET_SIZES = (4, 64)  # smallest and largest set size


@dataclass(frozen=True)
class Trial:
    """What to draw. `level` is the target's difference in the feature's unit (>= 0);
    `spread` the distractors' jitter in the same unit (feature experiments only)."""

    experiment: Experiment
    feature: Feature
    level: float
    set_size: int
    target_present: bool = True
    spread: float = 0.0
    seed: int = 0


@dataclass(frozen=True)
class Item:
    """One drawn object: centre (px), angle (degrees counter-clockwise on screen), ln of its
    area over the distractors' base area, and its 8-bit sRGB colour."""

    x: float
    y: float
    angle: float
    log_area: float
    rgb: tuple[int, int, int]
    target: bool


@dataclass(frozen=True)
class Stimulus:
    params: StimulusParams
    items: tuple[Item, ...]
    png: bytes


def _check(trial: Trial) -> None:
    low, high = SET_SIZES
    if not low <= trial.set_size <= high:
        raise ValueError(f"set size {trial.set_size}: choose from {low} to {high}")
    if trial.level < 0 or trial.spread < 0:
        raise ValueError("level and spread are magnitudes (>= 0)")
    if (trial.experiment == "conjunction") != (trial.feature == CONJUNCTION):
        raise ValueError(f"a conjunction experiment has feature {CONJUNCTION!r}, and only it")
    if trial.experiment in CHOICE_EXPERIMENTS and not trial.target_present:
        raise ValueError("a detection array always has a target (which feature differs)")


def make_stimulus(trial: Trial) -> Stimulus:
    """Draw one array; the same trial gives the same bytes."""
    _check(trial)
    rng = np.random.default_rng(trial.seed)
    base_angle = float(rng.uniform(0.0, 180.0))
    base_hue = float(rng.uniform(0.0, 360.0))
    sign = int(rng.choice([-1, 1]))
    if trial.experiment == "conjunction":
        specs = _conjunction(rng, trial, base_angle, base_hue, sign)
    else:
        specs = _feature_items(rng, trial, base_angle, base_hue, sign)
    items = _layout(rng, specs)
    image = _draw(items)
    target = next((i for i in items if i.target), None)
    params = StimulusParams(
        experiment=trial.experiment, feature=trial.feature, level=trial.level,
        unit=UNITS[trial.feature], sign=sign, set_size=trial.set_size,
        target_present=target is not None, spread=trial.spread, seed=trial.seed,
        image_size=IMAGE_SIZE, target_box=_box(target) if target else None,
        conjunction_deg=CONJUNCTION_DEG if trial.experiment == "conjunction" else None)
    buf = io.BytesIO()
    image.save(buf, format="PNG", pnginfo=png_info(params), compress_level=6)
    return Stimulus(params, tuple(items), buf.getvalue())


_Spec = tuple[float, float, tuple[int, int, int], bool]  # angle, log area, rgb, target


def _rgb(value: np.ndarray) -> tuple[int, int, int]:
    r, g, b = (int(v) for v in value)
    return r, g, b


def _feature_items(rng: np.random.Generator, trial: Trial, base_angle: float,
                   base_hue: float, sign: int) -> list[_Spec]:
    feature, n = trial.feature, trial.set_size
    base_rgb, odd_rgb = colour.target_colour(base_hue, trial.level if feature == "color"
                                             else 0.0, sign)
    m = n - 1 if trial.target_present else n
    jitter = rng.uniform(-trial.spread, trial.spread, m) if trial.spread else np.zeros(m)
    angles, log_areas = np.full(m, base_angle), np.zeros(m)
    colours = np.repeat(base_rgb[None], m, 0)
    if feature == "orientation":
        angles = angles + jitter
    elif feature == "size":
        log_areas = jitter
    elif trial.spread:
        steps = colour.hue_steps(base_hue, np.abs(jitter)) * np.sign(jitter)
        colours = colour.srgb8(colour.lch_lab(base_hue + steps))
    specs = [(float(a), float(s), _rgb(c), False)
             for a, s, c in zip(angles, log_areas, colours, strict=True)]
    if trial.target_present:
        angle = base_angle + (sign * trial.level if feature == "orientation" else 0.0)
        log_area = sign * trial.level if feature == "size" else 0.0
        specs.insert(0, (angle, log_area, _rgb(odd_rgb), True))
    return specs


def _conjunction(rng: np.random.Generator, trial: Trial, base_angle: float, base_hue: float,
                 sign: int) -> list[_Spec]:
    """Target (colour B, orientation B); distractors half (A, B) and half (B, A) (shuffled,
    each kind at least once), so each of the target's features is shared by distractors."""
    rgb_a, rgb_b = (_rgb(c) for c in colour.target_colour(base_hue, trial.level, sign))
    angle_a, angle_b = base_angle, base_angle + sign * CONJUNCTION_DEG
    m = trial.set_size - 1 if trial.target_present else trial.set_size
    kinds = rng.permutation(np.arange(m) % 2)
    specs: list[_Spec] = [(angle_b, 0.0, rgb_a, False) if k == 0 else
                          (angle_a, 0.0, rgb_b, False) for k in kinds]
    if trial.target_present:
        specs.insert(0, (angle_b, 0.0, rgb_b, True))
    return specs


def _radius(log_area: float) -> float:
    return LENGTH / 2 * math.exp(log_area / 2)


def _layout(rng: np.random.Generator, specs: list[_Spec]) -> list[Item]:
    """Objects in random cells of a square grid (about 1.25 cells per object), each jittered
    inside the disc its cell holds."""
    n = len(specs)
    side = max(2, math.ceil(math.sqrt(n * 1.25)))
    cell = (IMAGE_SIZE - 2 * MARGIN) / side
    cells = rng.permutation(side * side)[:n]
    items = []
    for (angle, log_area, rgb, target), index in zip(specs, cells, strict=True):
        room = cell / 2 - _radius(log_area) - GAP
        if room < 0:
            raise ValueError(f"an object of log area ratio {log_area:.2f} does not fit "
                             f"{n} objects; use a smaller set size or level")
        row, col = divmod(int(index), side)
        r, t = room * math.sqrt(rng.random()), rng.uniform(0.0, 2 * math.pi)
        x = MARGIN + (col + 0.5) * cell + r * math.cos(t)
        y = MARGIN + (row + 0.5) * cell + r * math.sin(t)
        items.append(Item(x, y, angle, log_area, rgb, target))
    return items


def outline(item: Item, scale: float = 1.0) -> np.ndarray:
    """The ellipse's polygon in px (times `scale`)."""
    a = _radius(item.log_area)
    t = np.linspace(0.0, 2 * np.pi, 96, endpoint=False)
    x, y = a * np.cos(t), ASPECT * a * np.sin(t)
    th = math.radians(item.angle)  # counter-clockwise on screen, where y points down
    px = item.x + x * math.cos(th) + y * math.sin(th)
    py = item.y - x * math.sin(th) + y * math.cos(th)
    return np.stack([px, py], 1) * scale


def _box(item: Item) -> tuple[float, float, float, float]:
    poly = outline(item)
    (x0, y0), (x1, y1) = poly.min(0), poly.max(0)
    return round(float(x0), 2), round(float(y0), 2), round(float(x1), 2), round(float(y1), 2)


def background() -> tuple[int, int, int]:
    return _rgb(colour.srgb8(colour.lch_lab(0.0, colour.BACKGROUND_L, 0.0))[0])


def _draw(items: list[Item]) -> Image.Image:
    big = Image.new("RGB", (IMAGE_SIZE * SUPERSAMPLE,) * 2, background())
    draw = ImageDraw.Draw(big)
    for item in items:
        draw.polygon([(float(x), float(y)) for x, y in outline(item, SUPERSAMPLE)],
                     fill=item.rgb)
    return big.reduce(SUPERSAMPLE)
