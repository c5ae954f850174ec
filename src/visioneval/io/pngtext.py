"""The `visioneval` tEXt chunk of a generated PNG: the parameters it was drawn from, so
the image describes itself wherever it goes (a dataset row, a request, a bug report)."""

from __future__ import annotations

import io

from PIL import Image, PngImagePlugin

TEXT_KEY = "visioneval"


def text_info(text: str) -> PngImagePlugin.PngInfo:
    """The chunk to save a PNG with (`image.save(..., pnginfo=text_info(json))`)."""
    info = PngImagePlugin.PngInfo()
    info.add_text(TEXT_KEY, text)
    return info


def read_text(png: bytes) -> str | None:
    """The chunk's text, or None when the PNG has none (or the bytes are no image)."""
    try:
        with Image.open(io.BytesIO(png)) as image:
            text = getattr(image, "text", {}).get(TEXT_KEY)
    except (OSError, ValueError):
        return None
    return text if isinstance(text, str) else None
