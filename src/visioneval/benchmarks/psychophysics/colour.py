"""Colours at fixed CIELAB lightness and chroma, a hue step apart by a requested CIEDE2000
difference (Sharma, Wu & Dalal 2005, as `skimage.color.deltaE_ciede2000` computes it).

Rendering: sRGB (IEC 61966-2-1, D65), 8 bits per channel. At L* = 65 and C* = 35 every hue
is inside the sRGB gamut (checked by `in_gamut`), so the base hue may be anywhere."""

from __future__ import annotations

import numpy as np
from skimage.color import deltaE_ciede2000, lab2xyz, rgb2lab

LIGHTNESS = 65.0
CHROMA = 35.0
BACKGROUND_L = 85.0  # a neutral grey background
_XYZ_TO_LINEAR = np.array([[3.2406, -1.5372, -0.4986], [-0.9689, 1.8758, 0.0415],
                           [0.0557, -0.2040, 1.0570]])
_STEPS = np.linspace(0.0, 180.0, 36001)  # hue differences searched, 0.005 degrees apart


def lch_lab(hue: np.ndarray | float, lightness: float = LIGHTNESS,
            chroma: float = CHROMA) -> np.ndarray:
    h = np.radians(np.atleast_1d(np.asarray(hue, dtype=float)))
    return np.stack([np.full_like(h, lightness), chroma * np.cos(h), chroma * np.sin(h)], 1)


def linear_rgb(lab: np.ndarray) -> np.ndarray:
    """Linear sRGB of CIELAB colours, unclipped (outside [0, 1]: out of gamut)."""
    return np.asarray(lab2xyz(lab)) @ _XYZ_TO_LINEAR.T


def in_gamut(lab: np.ndarray) -> bool:
    lin = linear_rgb(lab)
    return bool((lin >= 0).all() and (lin <= 1).all())


def srgb8(lab: np.ndarray) -> np.ndarray:
    """8-bit sRGB of in-gamut CIELAB colours (ValueError when one is out of gamut)."""
    if not in_gamut(lab):
        raise ValueError("a colour is outside the sRGB gamut")
    lin = linear_rgb(lab)
    encoded = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * np.power(lin, 1 / 2.4) - 0.055)
    return np.clip(np.round(encoded * 255), 0, 255).astype(np.uint8)


def lab_of(rgb8: np.ndarray) -> np.ndarray:
    """CIELAB of 8-bit sRGB pixels (n x 3)."""
    return np.asarray(rgb2lab(np.asarray(rgb8, dtype=float).reshape(-1, 1, 3) / 255.0)
                      ).reshape(-1, 3)


def delta_e(rgb_a: np.ndarray, rgb_b: np.ndarray) -> np.ndarray:
    """CIEDE2000 between 8-bit sRGB colours (as measured from pixels)."""
    return np.asarray(deltaE_ciede2000(lab_of(rgb_a), lab_of(rgb_b)))


def hue_steps(base_hue: float, delta: np.ndarray) -> np.ndarray:
    """The hue differences (degrees, >= 0) that put colours `delta` ΔE00 from the base
    colour on the constant L*, C* circle (increasing hue; ΔE00 grows monotonically with
    the step over 0-180 degrees), by interpolating a fine table."""
    base = lch_lab(base_hue)
    table = deltaE_ciede2000(np.repeat(base, len(_STEPS), 0), lch_lab(base_hue + _STEPS))
    table = np.maximum.accumulate(np.asarray(table))
    if np.max(delta) > table[-1]:
        raise ValueError(f"ΔE00 {np.max(delta):g} is beyond the largest at C*={CHROMA:g} "
                         f"({table[-1]:.1f})")
    return np.interp(np.abs(delta), table, _STEPS)


def target_colour(base_hue: float, level: float, sign: int) -> tuple[np.ndarray, np.ndarray]:
    """(base, target) 8-bit sRGB colours whose measured ΔE00 is nearest `level`: the 8-bit
    colours along the hue circle near the exact step are tried, as rounding to 8 bits
    alone moves ΔE00 by a few tenths."""
    base = srgb8(lch_lab(base_hue))[0]
    if level == 0:
        return base, base.copy()
    step = float(hue_steps(base_hue, np.array([level]))[0])
    hues = base_hue + sign * (step + np.linspace(-1.0, 1.0, 401) * max(0.5, 0.1 * step))
    candidates = np.unique(srgb8(lch_lab(hues)), axis=0)
    errors = np.abs(delta_e(np.repeat(base[None], len(candidates), 0), candidates) - level)
    return base, candidates[int(np.argmin(errors))]
