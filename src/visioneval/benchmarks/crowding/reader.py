"""The builtin `reader` for crowding stimuli: a classical observer that reads the pixels of
the middle C only. It takes each pixel's darkness in linear light (the background's
luminance minus the pixel's), finds the first ring out from the image's centre in the
radial profile of darkness (the target's: a flanker's nearest edge is farther out at every
spacing of the design), and answers with the quarter of that ring, up, right, down or left,
that holds the least darkness: the gap. Flankers can mislead it only where they reach into
the target's own ring, which at the design's spacings (1 diameter and more: at most
touching) they never do: its critical spacing lies below every tested level."""

from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image

from visioneval.stimuli.srgb import LUMINANCE_OF_CODE

BIN = 0.5  # px, the radial profile's step
FOUND = 0.5  # a ring: the profile above this share of its highest value


def read(prompt: str, png: bytes) -> str:
    with Image.open(io.BytesIO(png)) as image:
        codes = np.asarray(image.convert("L"))
    luminance = LUMINANCE_OF_CODE[codes]
    dark = np.clip(float(np.median(luminance)) - luminance, 0.0, None)
    height, width = dark.shape
    dx = np.arange(width) + 0.5 - width / 2
    dy = (np.arange(height) + 0.5 - height / 2)[:, None]
    bins = (np.hypot(dx, dy) / BIN).astype(np.int64).ravel()
    profile = np.bincount(bins, dark.ravel()) / np.maximum(np.bincount(bins), 1)
    found = _first_ring(profile)
    if found is None:
        return "up"  # nothing drawn: a guess
    ring = ((bins >= found[0]) & (bins <= found[1])).reshape(dark.shape)
    ys, xs = np.nonzero(ring)
    across, down = dx[xs], dy[ys, 0]  # y grows downward
    quarters = {"up": -down > np.abs(across), "down": down > np.abs(across),
                "left": -across >= np.abs(down), "right": across >= np.abs(down)}
    ink = dark[ys, xs]
    mean = {side: float(ink[where].mean()) if where.any() else math.inf
            for side, where in quarters.items()}
    return min(mean, key=lambda side: mean[side])


def _first_ring(profile: np.ndarray) -> tuple[int, int] | None:
    """The bins of the first run of the profile above FOUND of its peak, from the centre."""
    if profile.max() <= 0:
        return None
    above = profile > FOUND * profile.max()
    start = int(np.argmax(above))
    end = start
    while end + 1 < len(profile) and above[end + 1]:
        end += 1
    return start, end
