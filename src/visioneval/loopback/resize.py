"""What a provider does to an image before its model looks: the loopback server's
`--downscale F` (each side divided by F) and `--max-side N` (a long edge over N brought
down to N, as Anthropic does at 1568 pixels), so the resolution probe can be checked
against a known reduction.

Resampling is Pillow's LANCZOS: its kernel widens with the reduction, so it filters out
what the smaller image cannot hold before sampling, as careful resizers do. Area averaging
(Pillow's BOX, `Image.reduce`) was measured and not used: its side lobes pass gratings
finer than the new pixel pitch on as aliased stripes with up to a fifth of their contrast,
so what survives a reduction would depend on the grating's phase. The result is a PNG (any
input format; the text chunks are not carried over), in the source's mode when PNG holds it
(L, LA, RGB, RGBA), else RGB or RGBA."""

from __future__ import annotations

import io
import math

from visioneval.io.images import ImageError, open_to_decode
from visioneval.io.resize import lanczos


def target_size(width: int, height: int, downscale: float | None,
                max_side: int | None) -> tuple[int, int]:
    """The size after dividing each side by `downscale`, then capping the long edge at
    `max_side` (the aspect ratio kept; at least one pixel a side)."""
    w, h = float(width), float(height)
    if downscale is not None and downscale != 1.0:
        w, h = w / downscale, h / downscale
    if max_side is not None and max(w, h) > max_side:
        scale = max_side / max(w, h)
        w, h = w * scale, h * scale
    return max(1, round(w)), max(1, round(h))


def resized(data: bytes, downscale: float | None, max_side: int | None) -> bytes | None:
    """The image reduced as the script says, as PNG bytes; None when it keeps its size.
    ImageError when it cannot be decoded (TooManyPixels before decoding a huge one)."""
    with open_to_decode(data, "the image") as image:
        size = target_size(image.width, image.height, downscale, max_side)
        if size == image.size:
            return None
        try:
            small = lanczos(image, size)
        except OSError as exc:
            raise ImageError(f"the image: cannot be decoded ({exc})") from None
    buf = io.BytesIO()
    small.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def check(downscale: float | None, max_side: int | None) -> None:
    """One line for a reduction the server cannot apply."""
    if downscale is not None and not (math.isfinite(downscale) and downscale >= 1.0):
        raise ValueError(f"--downscale {downscale:g}: a factor of 1 or more (2: half the "
                         "width and half the height)")
    if max_side is not None and max_side < 1:
        raise ValueError(f"--max-side {max_side}: a number of pixels, 1 or more")
