"""The builtin `reader` for crowding stimuli: a classical observer that reads the pixels of
the middle C only. It takes each pixel's darkness in linear light (the background's
luminance minus the pixel's), finds the first ring out from the image's centre in the
radial profile of darkness (the target's: a flanker's nearest edge is farther out at every
spacing of the design), and answers with the quarter of that ring, up, right, down or left,
that holds the least darkness: the gap. Flankers can mislead it only where they reach into
the target's own ring, which at the design's spacings (1.1 diameters and more) they never
do: its critical spacing lies below every tested level."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from visioneval.stimuli.srgb import decode

BIN = 0.5  # px, the radial profile's step
FOUND = 0.5  # a ring: the profile above this share of its highest value


def read(prompt: str, png: bytes) -> str:
    with Image.open(io.BytesIO(png)) as image:
        codes = np.asarray(image.convert("L"), dtype=np.float64)
    luminance = decode(codes)
    dark = np.clip(float(np.median(luminance)) - luminance, 0.0, None)
    height, width = dark.shape
    rows, cols = np.mgrid[0:height, 0:width]
    dx, dy = cols + 0.5 - width / 2, rows + 0.5 - height / 2
    radius = np.hypot(dx, dy)
    bins = (radius / BIN).astype(np.int64)
    profile = np.bincount(bins.ravel(), dark.ravel()) / np.maximum(
        np.bincount(bins.ravel()), 1)
    inner = _first_ring(profile)
    if inner is None:
        return "up"  # nothing drawn: a guess
    ring = (bins >= inner[0]) & (bins <= inner[1])
    angle = np.degrees(np.arctan2(dy, dx))  # 0 right, 90 down (y grows downward)
    quarters = {"right": np.abs(angle) <= 45, "down": (angle > 45) & (angle < 135),
                "left": np.abs(angle) >= 135, "up": (angle > -135) & (angle < -45)}
    ink = {side: float(dark[ring & where].mean()) for side, where in quarters.items()}
    return min(ink, key=lambda side: ink[side])


def _first_ring(profile: np.ndarray) -> tuple[int, int] | None:
    """The bins of the first run of the profile above FOUND of its peak, from the centre."""
    if profile.max() <= 0:
        return None
    above = np.flatnonzero(profile > FOUND * profile.max())
    start = int(above[0])
    end = start
    while end + 1 < len(profile) and profile[end + 1] > FOUND * profile.max():
        end += 1
    return start, end
