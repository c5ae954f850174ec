"""The `visioneval` tEXt chunk of a generated PNG: the parameters it was drawn from, so
the image describes itself wherever it goes (a dataset row, a request, a bug report)."""

from __future__ import annotations

import io
from typing import TypeVar

from PIL import Image, PngImagePlugin
from pydantic import BaseModel, ValidationError

TEXT_KEY = "visioneval"
M = TypeVar("M", bound=BaseModel)


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


def read_model(png: bytes, model: type[M], what: str = "") -> M:
    """The parameters the chunk carries, as `model`; ValueError with one line when the PNG
    has no chunk or the chunk is not one (`what` names what it should be)."""
    text = read_text(png)
    if text is None:
        raise ValueError(f"the PNG has no '{TEXT_KEY}' text chunk")
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        kind = f" is not {what}" if what else ""
        raise ValueError(f"the '{TEXT_KEY}' text chunk{kind}: {where}: {first['msg']}") \
            from None
