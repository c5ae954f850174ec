"""The canary reader: a classical observer of the resolution probe's gratings, for the
loopback server (`visioneval loopback --answer canary`). It sees only the pixels it
receives, after any resizing, and never the PNG's text chunk.

It averages the central half of the image (inside the canary's patch at any scale) down
its columns and along its rows: stripes running top to bottom leave a profile across the
columns and a flat one across the rows, and the other way round for horizontal stripes.
The RMS of each profile is the grating's contrast in that direction (a full-contrast canary
gives about 71 grey levels; 8-bit rounding alone about 0.3). The reader answers when one
direction's contrast is at least `CONTRAST_FLOOR` grey levels and `CLEAR_RATIO` times the
other's; otherwise it guesses, as an observer forced to choose would: one of the two
picked by a checksum of the image bytes (deterministic, so a resumed run answers the
same).

How fine a grating it still reads therefore depends only on how much contrast resizing
left: with Pillow's Lanczos reduction by a factor F, about 1.5·F pixels of the sent image
(docs/probe.md)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from visioneval.io.images import ImageError, TooManyPixels, open_to_decode
from visioneval.probe.canary import ORIENTATIONS, Orientation

CONTRAST_FLOOR = 5.0  # RMS grey levels of the stronger profile
CLEAR_RATIO = 3.0  # the stronger profile over the weaker


@dataclass(frozen=True)
class Profiles:
    """RMS contrast (grey levels) of the column means across x and the row means across y
    in the central half of the image."""

    across_x: float
    across_y: float

    def orientation(self) -> Orientation | None:
        """The stripes' orientation when one direction clearly dominates, else None."""
        strong, weak = max(self.across_x, self.across_y), min(self.across_x, self.across_y)
        if strong < CONTRAST_FLOOR or strong < CLEAR_RATIO * weak:
            return None
        return "vertical" if self.across_x > self.across_y else "horizontal"


def is_canary_question(text: str) -> bool:
    """Whether the prompt asks the canary's question (the reader answers nothing else)."""
    return "horizontal or vertical" in text.lower()


def profiles(png: bytes) -> Profiles:
    """The two profiles' contrast; ImageError when the bytes cannot be decoded (and
    TooManyPixels, before decoding, for an image beyond the decode limit)."""
    with open_to_decode(png, "the image") as image:
        width, height = image.size
        box = (width // 4, height // 4, width - width // 4, height - height // 4)
        try:
            centre = np.asarray(image.crop(box).convert("L"), dtype=np.float64)
        except OSError as exc:
            raise ImageError(f"the image: cannot be decoded ({exc})") from None
    if centre.size == 0:
        return Profiles(0.0, 0.0)
    return Profiles(float(centre.mean(axis=0).std()), float(centre.mean(axis=1).std()))


def guess(png: bytes) -> Orientation:
    return ORIENTATIONS[zlib.crc32(png) % 2]


def read(png: bytes) -> Orientation:
    """The orientation the reader answers for these image bytes: what it sees, or a guess
    when it sees no clear stripes or cannot decode the image."""
    try:
        seen = profiles(png).orientation()
    except TooManyPixels:
        raise
    except ImageError:
        seen = None
    return seen or guess(png)
