"""The `visioneval` tEXt chunk of a generated PNG: the parameters it was drawn from, so
the image describes itself wherever it goes (a dataset row, a request, a bug report)."""

from __future__ import annotations

import zlib
from typing import TypeVar

from PIL import PngImagePlugin
from pydantic import BaseModel, ValidationError

from visioneval.validation import first_error

TEXT_KEY = "visioneval"
M = TypeVar("M", bound=BaseModel)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TEXT_CAP = 64 * 1024
"""The most a `visioneval` chunk may hold: the parameters are a few hundred bytes, a scene a
few thousand. A bigger one is refused before it is read, not after (Pillow reads a text
chunk whole before it checks its own limits, and decodes every pixel to find chunks after
the image data)."""
_TEXT_KINDS = (b"tEXt", b"zTXt", b"iTXt")


def text_info(text: str) -> PngImagePlugin.PngInfo:
    """The chunk to save a PNG with (`image.save(..., pnginfo=text_info(json))`)."""
    info = PngImagePlugin.PngInfo()
    info.add_text(TEXT_KEY, text)
    return info


def read_text(png: bytes, cap: int = TEXT_CAP) -> str | None:
    """The chunk's text, or None when the PNG has none (or the bytes are no PNG). The
    chunks are walked by their headers alone: no pixel is decoded and no other chunk is
    read, wherever they stand (before or after the image data). A `visioneval` chunk over
    `cap` bytes (stored or decompressed) is a ValueError, found before it is read."""
    if not png.startswith(PNG_SIGNATURE):
        return None
    view = memoryview(png)
    key = TEXT_KEY.encode() + b"\0"
    pos = len(PNG_SIGNATURE)
    while pos + 8 <= len(png):
        length = int.from_bytes(view[pos:pos + 4], "big")
        kind = bytes(view[pos + 4:pos + 8])
        start, end = pos + 8, pos + 8 + length
        if kind == b"IEND" or end > len(png):
            return None
        if kind in _TEXT_KINDS and bytes(view[start:start + len(key)]) == key:
            if length > cap:
                raise ValueError(f"the '{TEXT_KEY}' text chunk is {_size(length)}, over the "
                                 f"{_size(cap)} it may hold; not read")
            return _decoded(kind, bytes(view[start + len(key):end]), cap)
        pos = end + 4  # past its CRC
    return None


def _decoded(kind: bytes, body: bytes, cap: int) -> str | None:
    """A text chunk's text after its keyword (PNG specification, 11.3.4): tEXt is Latin-1;
    zTXt a compression method byte and zlib data; iTXt a compression flag and method, a
    language tag and a translated keyword (each ending in a NUL), then UTF-8, maybe zlib.
    None when the chunk is malformed."""
    try:
        if kind == b"tEXt":
            return body.decode("latin-1")
        if kind == b"zTXt":
            return _inflate(body[1:], cap).decode("latin-1")
        compressed, rest = body[0], body[2:]
        _, _, rest = rest.partition(b"\0")  # language tag
        _, _, text = rest.partition(b"\0")  # translated keyword
        return (_inflate(text, cap) if compressed else text).decode("utf-8")
    except (IndexError, UnicodeDecodeError, zlib.error):
        return None


def _inflate(data: bytes, cap: int) -> bytes:
    """zlib data decompressed, at most `cap` bytes of it (ValueError beyond)."""
    inflater = zlib.decompressobj()
    out = inflater.decompress(data, cap + 1)
    if len(out) > cap:
        raise ValueError(f"the '{TEXT_KEY}' text chunk holds over {_size(cap)}; not read")
    return out


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 1024:g} KiB"


def read_model(png: bytes, model: type[M], what: str = "") -> M:
    """The parameters the chunk carries, as `model`; ValueError with one line when the PNG
    has no chunk, the chunk is not one (`what` names what it should be) or it is over
    TEXT_CAP."""
    text = read_text(png)
    if text is None:
        raise ValueError(f"the PNG has no '{TEXT_KEY}' text chunk")
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        kind = f" is not {what}" if what else ""
        raise ValueError(f"the '{TEXT_KEY}' text chunk{kind}: "
                         f"{first_error(exc, whole='', count_more=False)}") from None
