"""Encoded images as they travel to models: the stored bytes, never re-encoded.

SalBench's cues (a slightly different colour, size or angle) are exactly what a lossy
re-encode or a downscale can damage, so an `Image` keeps the dataset's PNG/JPEG bytes and
only reads the header to learn the pixel size.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field

import pybase64
from PIL import Image as PILImage

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


class ImageError(ValueError):
    """The bytes are not an image a model server would accept."""


def sniff_mime(data: bytes) -> str:
    """Return the MIME type from the file's magic bytes (PNG, JPEG, GIF, WebP)."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ImageError("not a PNG, JPEG, GIF or WebP file")


@dataclass(eq=False)
class Image:
    """One encoded image; `data` is sent as is, base64-encoded once and only when asked."""

    data: bytes
    mime: str
    sha256: str
    width: int
    height: int
    _base64: str | None = field(default=None, repr=False)

    @classmethod
    def from_bytes(cls, data: bytes, *, verify: bool = True) -> Image:
        """Check the bytes are an image (header, and PNG chunk CRCs when `verify`) and wrap them."""
        if not data:
            raise ImageError("empty image bytes")
        mime = sniff_mime(data)
        try:
            with PILImage.open(io.BytesIO(data)) as pil:
                width, height = pil.size
                if verify:
                    pil.verify()
        except PILImage.UnidentifiedImageError:
            raise ImageError(f"corrupt or truncated {mime} data ({len(data)} bytes)") from None
        except Exception as exc:  # PIL raises many types for corrupt files
            raise ImageError(f"corrupt {mime} data ({exc})") from None
        return cls(data, mime, hashlib.sha256(data).hexdigest(), width, height)

    def base64(self) -> str:
        """The bytes in base64, computed once per image (few-shot examples are reused)."""
        if self._base64 is None:
            self._base64 = pybase64.b64encode(self.data).decode("ascii")
        return self._base64

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{self.base64()}"

    def describe(self) -> dict:
        """What a record keeps of an image: enough to find it again, not the pixels."""
        return {"sha256": self.sha256, "mime": self.mime, "width": self.width,
                "height": self.height, "bytes": len(self.data)}
