"""8-bit sRGB codes and linear luminance (relative, 0 black to 1 white), both ways, and what
8 bits can show: the smallest contrast one code step makes at a background.

The transfer function is IEC 61966-2-1's: V = code/255; L = V/12.92 for V <= 0.04045, else
((V + 0.055)/1.055)^2.4. Contrast is defined on luminance, so every drawing is mixed in L
and only the finished image is encoded."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

_KNEE = 0.04045
_LINEAR_KNEE = _KNEE / 12.92
CODES = np.arange(256)


def decode(code: ArrayLike) -> NDArray[np.float64]:
    """Linear luminance of 8-bit codes (or of continuous code values, 0 to 255)."""
    v = np.asarray(code, dtype=np.float64) / 255.0
    return np.where(v <= _KNEE, v / 12.92, ((np.maximum(v, _KNEE) + 0.055) / 1.055) ** 2.4)


def encode(luminance: ArrayLike) -> NDArray[np.float64]:
    """Continuous code values (0 to 255, not rounded) of linear luminances: the inverse of
    `decode`, so a caller can round, or dither, in the space it means to."""
    lum = np.clip(np.asarray(luminance, dtype=np.float64), 0.0, 1.0)
    v = np.where(lum <= _LINEAR_KNEE, lum * 12.92,
                 1.055 * np.maximum(lum, _LINEAR_KNEE) ** (1 / 2.4) - 0.055)
    return v * 255.0


LUMINANCE_OF_CODE = decode(CODES)
"""The 256 luminances an 8-bit channel can show, darkest first."""


def to_codes(luminance: ArrayLike, rng: np.random.Generator | None = None) -> NDArray[np.uint8]:
    """8-bit codes of linear luminances. Without `rng`, the nearest code (rounded in code
    space, as every encoder does). With `rng`, noisy-bit dithering (Allard & Faubert 2008):
    each value takes the code below or above it at random, the one above with probability
    equal to its place between the two measured in linear luminance, so the expected
    luminance of every pixel is exactly the one asked for, below one code step too (uniform
    noise of ±0.5 step added before rounding, the step measured in light, not in code)."""
    lum = np.clip(np.asarray(luminance, dtype=np.float64), 0.0, 1.0)
    if rng is None:
        return np.rint(encode(lum)).astype(np.uint8)
    below = np.clip(np.searchsorted(LUMINANCE_OF_CODE, lum, side="right") - 1, 0, 254)
    low, high = LUMINANCE_OF_CODE[below], LUMINANCE_OF_CODE[below + 1]
    place = (lum - low) / (high - low)
    return (below + (rng.random(lum.shape) < place)).astype(np.uint8)


@dataclass(frozen=True)
class StepContrast:
    """The contrast of one code step at a background code, on luminance."""

    michelson: float
    """(L(m+1) - L(m-1)) / (L(m+1) + L(m-1)): a grating of ±1 code around code m."""
    weber: float
    """(L(m+1) - L(m)) / L(m): one code brighter than the background."""


def smallest_contrast(mean_code: int) -> StepContrast:
    """The smallest contrast an undithered 8-bit image can hold at a background code: at
    code 128 a ±1-code grating is 1.69% Michelson, above the 0.2-1% human thresholds at the
    peak of the contrast sensitivity function, so those need dithering."""
    if not 1 <= mean_code <= 254:
        raise ValueError(f"the background code is {mean_code}; a ±1 step needs 1 to 254")
    below, mean, above = LUMINANCE_OF_CODE[mean_code - 1:mean_code + 2]
    return StepContrast(michelson=float((above - below) / (above + below)),
                        weber=float((above - mean) / mean))


def representable(contrast: float, background_code: int) -> bool:
    """Whether an undithered 8-bit image can show a Michelson contrast around a background:
    at least the ±1-code step there. Below it the display's resolution is too coarse and the
    contrast exists only as an expectation over dithered pixels."""
    return contrast >= smallest_contrast(background_code).michelson
