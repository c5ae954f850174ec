"""Small shared test helpers (real images, real servers; nothing of ours is mocked)."""

from __future__ import annotations

import io

from PIL import Image as PILImage

from visioneval.io.images import Image


def png_bytes(color=(200, 30, 30), size=(16, 12)) -> bytes:
    buf = io.BytesIO()
    PILImage.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def make_image(color=(200, 30, 30), size=(16, 12)) -> Image:
    return Image.from_bytes(png_bytes(color, size))
