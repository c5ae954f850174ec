"""The builtin `reader` for Vernier stimuli: a classical observer that reads the pixels. It
takes each image row's darkness in linear light (the background's luminance minus the
pixel's), splits the dark rows into the upper and the lower segment at the gap, and
compares the two segments' darkness-weighted column centroids: sub-pixel, because the
stimuli are anti-aliased in linear light."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from visioneval.stimuli.srgb import decode


def read(prompt: str, png: bytes) -> str:
    with Image.open(io.BytesIO(png)) as image:
        codes = np.asarray(image.convert("L"), dtype=np.float64)
    luminance = decode(codes)
    background = float(np.median(luminance))
    dark = np.clip(background - luminance, 0.0, None)
    rows = np.flatnonzero(dark.sum(axis=1) > 0.05 * dark.sum(axis=1).max())
    if len(rows) < 2:
        return "left"
    split = int(np.argmax(np.diff(rows))) + 1
    upper, lower = dark[rows[:split]], dark[rows[split:]]
    columns = np.arange(codes.shape[1]) + 0.5
    return "right" if _centroid(lower, columns) > _centroid(upper, columns) else "left"


def _centroid(part: np.ndarray, columns: np.ndarray) -> float:
    weights = part.sum(axis=0)
    return float((weights * columns).sum() / max(weights.sum(), 1e-12))
