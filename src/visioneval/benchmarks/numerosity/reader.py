"""The builtin `reader` for numerosity stimuli: a classical observer that counts. It takes
the pixels darker than a quarter of the background's luminance (linear light: the dots'
insides, never the grey frames or the anti-aliased rims between two dots, which lie at least
3 px apart), labels the connected regions and counts those whose centre lies in each half of
the image. It counts exactly, so its proportion correct is 1 at every ratio: its w lies
below what the tested ratios measure."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from scipy import ndimage

from visioneval.stimuli.srgb import decode


def read(prompt: str, png: bytes) -> str:
    left, right = count(png)
    return "right" if right > left else "left"


def count(png: bytes) -> tuple[int, int]:
    """The dots in the left and the right half of a stimulus."""
    with Image.open(io.BytesIO(png)) as image:
        luminance = decode(np.asarray(image.convert("L"), dtype=np.float64))
    dark = luminance < 0.25 * float(np.median(luminance))
    labels, found = ndimage.label(dark)
    if not found:
        return 0, 0
    centres = ndimage.center_of_mass(dark, labels, range(1, found + 1))
    middle = luminance.shape[1] / 2
    right = sum(1 for _, x in centres if x >= middle)
    return found - right, right
