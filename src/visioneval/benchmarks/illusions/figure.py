"""What the three illusions share: the canvas, ink and question frame, the comparison's size
from the level, which side is right, and the one picture a drawing returns. Each illusion's
module (mullerlyer.py, ebbinghaus.py, ponzo.py) draws its own figure and its control."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from visioneval.paradigms.trial import Geometry
from visioneval.stimuli.canvas import Canvas
from visioneval.stimuli.srgb import decode

SIZE = 448  # px, square: one 512 px tile for the hosted models that price by tiles
BACKGROUND = float(decode(255))  # white paper
INK = float(decode(0))  # black ink, as the figures are printed
THICKNESS = 2.0  # px, every line
TRIALS = 16  # a level; 9 levels a curve: 144 trials


@dataclass(frozen=True)
class Picture:
    """One drawn trial: the canvas, its geometry for the trial's `stimulus` and the side
    the standard stands on (the comparison stands on the other)."""

    canvas: Canvas
    geometry: Geometry
    standard_side: str


Draw = Callable[[float, bool, np.random.Generator], Picture]
"""(level in % of the standard, control, rng) -> the picture."""


@dataclass(frozen=True)
class Illusion:
    """One illusion: its condition name (its control is `<name>-control`), the levels of
    both curves, the options (the standard's side is drawn at random per trial), the
    question asked of both, the standard's size in px, what the two conditions show, and
    its drawing."""

    name: str
    title: str
    levels: tuple[float, ...]
    options: tuple[str, str]
    question: str
    standard_px: float
    shows: str
    control_shows: str
    draw: Draw

    @property
    def control(self) -> str:
        return f"{self.name}-control"


def comparison_size(standard: float, level: float) -> float:
    """The comparison's size: the standard's, `level` percent larger (negative: smaller)."""
    return standard * (1.0 + level / 100.0)


def sides(options: tuple[str, str], rng: np.random.Generator) -> tuple[str, str]:
    """(the standard's side, the comparison's side), drawn at random."""
    first, second = options
    return (first, second) if rng.random() < 0.5 else (second, first)


def canvas() -> Canvas:
    return Canvas(SIZE, SIZE, BACKGROUND)


def levels(step: float, count: int) -> tuple[float, ...]:
    """`count` levels `step` apart, symmetric about 0 (0 among them)."""
    half = count // 2
    return tuple(float(step * (i - half)) for i in range(count))
