"""The builtin `reader` for touching-circles stimuli: a classical observer that reads the
pixels. Each half of the image holds one pair; in linear light it takes each pixel's share
of ink (0 on the white background, 1 inside a circle), finds the pair's centre (the ink's
centroid: the point where two equal circles meet, or the middle of their gap, whatever the
pair's direction) and measures the light there: the white left in a small Gaussian window
(σ = 1.5 px) around it. A touching pair leaves only the thin wedges beside the point where
its circles meet; a gap adds its light across the window. The pair with more light at its
centre is the one with the gap: sub-pixel, because the stimuli are anti-aliased in linear
light."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from visioneval.stimuli.srgb import decode

WINDOW = 1.5  # px, σ of the Gaussian window at a pair's centre


def read(prompt: str, png: bytes) -> str:
    with Image.open(io.BytesIO(png)) as image:
        codes = np.asarray(image.convert("L"), dtype=np.float64)
    luminance = decode(codes)
    background, ink = float(np.median(luminance)), float(luminance.min())
    if background - ink <= 0:
        return "left"
    share = np.clip((background - luminance) / (background - ink), 0.0, 1.0)
    middle = share.shape[1] // 2
    left, right = light_at_centre(share[:, :middle]), light_at_centre(share[:, middle:])
    return "right" if right > left else "left"


def light_at_centre(share: np.ndarray) -> float:
    """The light (1 − ink share) around the ink's centroid, weighted by a Gaussian window;
    0 when the half holds no ink."""
    total = share.sum()
    if total <= 0:
        return 0.0
    rows, cols = np.mgrid[0:share.shape[0], 0:share.shape[1]] + 0.5
    cy, cx = (share * rows).sum() / total, (share * cols).sum() / total
    weight = np.exp(-((cols - cx) ** 2 + (rows - cy) ** 2) / (2 * WINDOW ** 2))
    return float((weight * (1.0 - share)).sum())
