"""How well a sub-pixel offset survives rendering: Vernier pairs (two dark segments, one
above the other, the lower one shifted across by 0.05 to 2 px) drawn on a mid-grey canvas
(code 128) with visioneval.stimuli's Canvas at 1, 4, 8 and 16 sub-samples per pixel side,
and the offset read back from the centroids of the light each segment takes away, in linear
luminance: before encoding (what anti-aliasing keeps) and from the 8-bit codes (what the PNG
holds). Beside the canvas's area sub-samples (each sub-sample counts the share of its box
inside the edge), plain point sub-samples (each one in or out), which is what supersampling
alone gives.

Each row: mean and largest |recovered - true offset| in px over every offset and trial (each
trial at a random sub-pixel place), for segments vertical and at 30 degrees, 1 px thick and
20 px long with a 4 px gap; then the time to draw one 512 x 512 image (a Vernier pair and
64 dots of radius 6) and encode it as PNG.

    uv run python measure/render_subpixel.py --trials 40
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from numpy.typing import NDArray

from visioneval.stimuli.canvas import Canvas
from visioneval.stimuli.srgb import decode

OFFSETS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
FACTORS = (1, 4, 8, 16)
ANGLES = (0.0, 30.0)
GREY = float(decode(128))
LENGTH, GAP, THICKNESS, SIZE = 20.0, 4.0, 1.0, 64


class PointSampled(Canvas):
    """Plain supersampling: a sub-sample is inside or outside, nothing between."""

    def _share(self, distance: NDArray[np.float64]) -> NDArray[np.float64]:
        return (distance < 0).astype(np.float64)


def vernier(canvas: Canvas, centre: tuple[float, float], angle_deg: float,
            offset: float) -> None:
    """Two segments along direction u (angle from vertical), the lower shifted by `offset`
    along n, perpendicular to u."""
    ux, uy = math.sin(math.radians(angle_deg)), math.cos(math.radians(angle_deg))
    nx, ny = uy, -ux
    reach = LENGTH / 2 + GAP / 2
    for side, shift in ((-1, 0.0), (1, offset)):
        mx = centre[0] + side * reach * ux + shift * nx
        my = centre[1] + side * reach * uy + shift * ny
        canvas.line((mx - LENGTH / 2 * ux, my - LENGTH / 2 * uy),
                    (mx + LENGTH / 2 * ux, my + LENGTH / 2 * uy), THICKNESS, 0.0)


def recovered(luminance: NDArray[np.float64], centre: tuple[float, float],
              angle_deg: float) -> float:
    """The offset along n between the two segments' centroids of the light they take."""
    ux, uy = math.sin(math.radians(angle_deg)), math.cos(math.radians(angle_deg))
    rows, cols = np.mgrid[0:luminance.shape[0], 0:luminance.shape[1]]
    x, y = cols + 0.5, rows + 0.5
    taken = GREY - luminance
    lower = (x - centre[0]) * ux + (y - centre[1]) * uy > 0
    spots = []
    for part in (~lower, lower):
        weight = taken * part
        spots.append(((weight * x).sum() / weight.sum(), (weight * y).sum() / weight.sum()))
    (x0, y0), (x1, y1) = spots
    return (x1 - x0) * uy - (y1 - y0) * ux


def errors(kind: type[Canvas], k: int, angle: float, trials: int,
           rng: np.random.Generator) -> tuple[list[float], list[float]]:
    """|recovered - true| before encoding and from the codes, over offsets x trials."""
    before, after = [], []
    for offset in OFFSETS:
        for _ in range(trials):
            centre = (SIZE / 2 + rng.random(), SIZE / 2 + rng.random())
            canvas = kind(SIZE, SIZE, GREY, supersample=k)
            vernier(canvas, centre, angle, offset)
            before.append(abs(recovered(canvas.luminance, centre, angle) - offset))
            after.append(abs(recovered(decode(canvas.codes()), centre, angle) - offset))
    return before, after


def cost_ms(kind: type[Canvas], k: int, repeats: int) -> float:
    """Median ms to draw and encode one 512 x 512 image: a Vernier pair and 64 dots."""
    rng = np.random.default_rng(0)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        canvas = kind(512, 512, GREY, supersample=k)
        vernier(canvas, (256.3, 256.6), 0.0, 0.5)
        for x, y in rng.uniform(20, 492, size=(64, 2)):
            canvas.disc((float(x), float(y)), 6.0, 1.0)
        canvas.to_png({"measure": "cost"})
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40, help="trials per offset")
    parser.add_argument("--repeats", type=int, default=7, help="timed images per factor")
    args = parser.parse_args()
    print(f"Vernier offsets {', '.join(f'{o:g}' for o in OFFSETS)} px, {args.trials} trials "
          "each; |error| in px")
    print(f"{'sub-samples':<12}{'k':>3}{'angle':>7}{'mean before':>13}{'max before':>12}"
          f"{'mean 8-bit':>12}{'max 8-bit':>11}{'ms/image':>10}")
    for kind, name in ((Canvas, "area"), (PointSampled, "point")):
        for k in FACTORS:
            ms = cost_ms(kind, k, args.repeats)
            for angle in ANGLES:
                before, after = errors(kind, k, angle, args.trials, np.random.default_rng(1))
                print(f"{name:<12}{k:>3}{angle:>7.0f}{np.mean(before):>13.4f}"
                      f"{np.max(before):>12.4f}{np.mean(after):>12.4f}{np.max(after):>11.4f}"
                      f"{ms:>10.1f}")


if __name__ == "__main__":
    main()
