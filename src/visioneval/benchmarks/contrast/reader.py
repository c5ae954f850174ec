"""The builtin `reader` for contrast-detection stimuli: a classical observer that reads the
pixels (never the text chunk). It decodes the codes to linear luminance, takes each half's
deviation from its mean under a Gaussian window at the half's centre (where a patch would
be), and their power spectra. The frequency it listens at is where the two spectra
together have the most power (the grating is in one half, the dither noise in both); it
answers the half with more power there and in the bins beside it: local contrast energy at
the stimulus's own frequency, found from the image."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from visioneval.stimuli.srgb import decode

WINDOW = 32.0  # px: the window's standard deviation, the patch's own size


def read(prompt: str, png: bytes) -> str:
    with Image.open(io.BytesIO(png)) as image:
        codes = np.asarray(image.convert("L"), dtype=np.float64)
    luminance = decode(codes)
    half = luminance.shape[1] // 2
    left, right = _power(luminance[:, :half]), _power(luminance[:, half:2 * half])
    total = left + right
    total[0, 0] = 0.0  # the mean's own bin
    row, col = (int(i) for i in np.unravel_index(int(np.argmax(total)), total.shape))
    return "left" if _near(left, row, col) > _near(right, row, col) else "right"


def _power(part: np.ndarray) -> np.ndarray:
    """The power spectrum of a half's deviation from its mean under the window."""
    height, width = part.shape
    y = np.arange(height) + 0.5 - height / 2
    x = np.arange(width) + 0.5 - width / 2
    window = np.exp(-(y[:, None] ** 2 + x[None, :] ** 2) / (2 * WINDOW ** 2))
    return np.abs(np.fft.rfft2((part - part.mean()) * window)) ** 2


def _near(power: np.ndarray, row: int, col: int) -> float:
    """The power in the bin and its neighbours (the window spreads a grating's power over a
    few bins); rows wrap around, as the spectrum's negative vertical frequencies do."""
    rows = [(row + d) % power.shape[0] for d in (-1, 0, 1)]
    cols = [c for c in (col - 1, col, col + 1) if 0 <= c < power.shape[1]]
    return float(power[np.ix_(rows, cols)].sum())
