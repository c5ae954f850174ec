"""A Gabor patch: a sinusoidal grating under a Gaussian envelope on a uniform field, in
linear light, L = L0 (1 + C exp(-r^2 / 2 sigma^2) cos(2 pi f x' + phase)), the stimulus of
contrast detection (Campbell & Robson 1968; the contrast sensitivity function)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from visioneval.stimuli.srgb import decode, encode, to_codes

NYQUIST = 0.5
"""Cycles per pixel above which a grating aliases into a coarser one."""


@dataclass(frozen=True)
class GaborImage:
    """The drawn patch: its 8-bit codes, the luminance asked for, and the contrast the codes
    really hold (what a model is shown, which below one code step differs from the one
    asked for unless the image was dithered)."""

    codes: NDArray[np.uint8]
    luminance: NDArray[np.float64]
    """The luminance asked for at each pixel, before encoding."""
    contrast: float
    """Michelson contrast in luminance the codes hold: the amplitude of the Gabor fitted to
    their decoded luminance by least squares, over the mean."""
    code_contrast: float
    """The same fit on the code values over the mean's code: what a model whose front end
    normalises codes linearly receives (about a 2.2th of `contrast` near mid-grey)."""


def gabor(width: int, height: int, *, cycles_per_image: float, orientation_deg: float,
          phase_deg: float, sigma_px: float, contrast: float, mean_luminance: float,
          rng: np.random.Generator | None = None) -> GaborImage:
    """A Gabor patch centred on the image. Frequency is in cycles per image width (it
    survives a provider's uniform rescaling; cycles per pixel = cycles_per_image / width);
    orientation 0 gives vertical stripes and positive angles turn them clockwise; phase 0
    puts a bright bar at the centre; contrast is Michelson on linear luminance around
    `mean_luminance`. With `rng` the codes are dithered, so a contrast below one code step
    (1.69% at code 128) is still there on average."""
    cycles_per_px = cycles_per_image / width
    if not 0 <= cycles_per_px < NYQUIST:
        raise ValueError(f"{cycles_per_image} cycles over {width} px is {cycles_per_px:.3g} "
                         f"cycles/px; a grating needs under {NYQUIST}")
    if sigma_px <= 0:
        raise ValueError(f"the envelope's sigma is {sigma_px} px; it needs to be above 0")
    if not 0 <= contrast <= 1:
        raise ValueError(f"the contrast is {contrast}; Michelson contrast runs from 0 to 1")
    if not 0 < mean_luminance * (1 + contrast) <= 1:
        raise ValueError(f"a mean luminance of {mean_luminance} with contrast {contrast} "
                         "leaves 0 to 1")
    shape = _shape(width, height, cycles_per_px, orientation_deg, phase_deg, sigma_px)
    luminance = mean_luminance * (1 + contrast * shape)
    codes = to_codes(luminance, rng)
    return GaborImage(
        codes=codes, luminance=luminance,
        contrast=_amplitude(decode(codes) / mean_luminance - 1, shape),
        code_contrast=_amplitude(codes / encode(mean_luminance) - 1, shape))


def _shape(width: int, height: int, cycles_per_px: float, orientation_deg: float,
           phase_deg: float, sigma_px: float) -> NDArray[np.float64]:
    """Envelope times carrier at each pixel's centre, -1 to 1."""
    rows, cols = np.mgrid[0:height, 0:width]
    x, y = cols + 0.5 - width / 2, rows + 0.5 - height / 2
    theta = math.radians(orientation_deg)
    across = x * math.cos(theta) + y * math.sin(theta)
    envelope = np.exp(-(x * x + y * y) / (2 * sigma_px ** 2))
    return envelope * np.cos(2 * math.pi * cycles_per_px * across + math.radians(phase_deg))


def _amplitude(relative: NDArray[np.float64], shape: NDArray[np.float64]) -> float:
    """The least-squares A of relative = offset + A shape: the offset takes up a mean that
    no code shows exactly, which would otherwise leak into A through the shape's own mean."""
    design = np.stack([np.ones(shape.size), shape.ravel()], axis=1)
    (_, amplitude), *_ = np.linalg.lstsq(design, relative.ravel(), rcond=None)
    return float(amplitude)
