"""Resizing a decoded image the one way visioneval does: Pillow's Lanczos filter in a mode
PNG holds. Used by the request variants (`scale:F`, `max-side:N`) and by the loopback
server that plays a provider which reduces images (docs/decisions.md says why Lanczos)."""

from __future__ import annotations

from PIL import Image

KEPT_MODES = ("L", "LA", "RGB", "RGBA")


def capped(width: int, height: int, max_side: int) -> tuple[int, int]:
    """The size with the long edge brought down to `max_side` (aspect kept, at least one
    pixel a side); the size itself when it is not over."""
    if max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def lanczos(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    """The decoded image at `size` (Lanczos), in its own mode when PNG holds it (L, LA,
    RGB, RGBA), else RGBA when it has transparency and RGB otherwise."""
    image.load()
    source = image if image.mode in KEPT_MODES else image.convert(
        "RGBA" if "A" in image.mode or "transparency" in image.info else "RGB")
    return source.resize(size, Image.Resampling.LANCZOS)
