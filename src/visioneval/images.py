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

PIL_FORMAT = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF",
              "image/webp": "WEBP"}
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


class ImageError(ValueError):
    """The bytes are not an image a model server would accept."""


# A few bytes of padding after the end marker are tolerated (some writers pad files); a
# PNG or JPEG cut short cannot hold its marker there (JPEG stuffs every FF in its data).
END_SLACK = 64
_PNG_END = b"\x00\x00\x00\x00IEND\xaeB`\x82"  # the empty IEND chunk with its CRC


def end_problem(data: bytes, mime: str) -> str | None:
    """Why the bytes look cut short, from their last bytes alone (no decode), or None.
    PNG ends with the IEND chunk, JPEG with EOI (FFD9), GIF with its trailer (3B); a WebP
    holds as many bytes as its RIFF header says."""
    tail = data[-END_SLACK - len(_PNG_END):]
    if mime == "image/png" and _PNG_END not in tail:
        return "no IEND chunk at the end"
    if mime == "image/jpeg" and b"\xff\xd9" not in tail:
        return "no EOI marker (FFD9) at the end"
    if mime == "image/gif" and not data.rstrip(b"\0").endswith(b";"):
        return "no trailer (3B) at the end"
    if mime == "image/webp":
        declared = int.from_bytes(data[4:8], "little") + 8
        if declared > len(data):
            return f"the RIFF header says {declared} bytes"
    return None


def sniff_mime(data: bytes) -> str:
    """Return the MIME type from the file's magic bytes (PNG, JPEG, GIF, WebP)."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ImageError("not a PNG, JPEG, GIF or WebP file")


def _check_end(data: bytes, mime: str) -> None:
    problem = end_problem(data, mime)
    if problem:
        raise ImageError(f"truncated {mime} data: {problem} ({len(data)} bytes)")


@dataclass(eq=False)
class Image:
    """One encoded image; `data` is sent as is. A `shared` image (a few-shot example used by
    every request of a config) keeps its base64; any other is encoded per request, so memory
    holds one copy per request in flight."""

    data: bytes
    mime: str
    sha256: str
    width: int
    height: int
    shared: bool = False
    _base64: bytes | None = field(default=None, repr=False)

    @classmethod
    def from_bytes(cls, data: bytes, *, verify: bool = False) -> Image:
        """Check the bytes are an image (magic bytes, a header Pillow can parse and the
        format's end marker; with `verify`, also PNG chunk CRCs, ~1.5 ms per MB) and wrap
        them. Pixels are not decoded."""
        if not data:
            raise ImageError("empty image bytes")
        mime = sniff_mime(data)
        if mime == "image/webp":  # its size is in the header: checked before Pillow reads it
            _check_end(data, mime)
        try:
            # Naming the format skips Pillow's probing of every plugin (45 -> 12 us).
            with PILImage.open(io.BytesIO(data), formats=[PIL_FORMAT[mime]]) as pil:
                width, height = pil.size
                if verify:
                    pil.verify()
        except PILImage.UnidentifiedImageError:
            raise ImageError(f"corrupt or truncated {mime} data ({len(data)} bytes)") from None
        except Exception as exc:  # PIL raises many types for corrupt files
            raise ImageError(f"corrupt {mime} data ({exc})") from None
        _check_end(data, mime)  # after the header: a broken header is named as such
        return cls(data, mime, hashlib.sha256(data).hexdigest(), width, height)

    def base64_bytes(self) -> bytes:
        """The bytes in base64 (kept only for shared images)."""
        if self._base64 is not None:
            return self._base64
        encoded = pybase64.b64encode(self.data)
        if self.shared:
            self._base64 = encoded
        return encoded

    def base64(self) -> str:
        return self.base64_bytes().decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{self.base64()}"

    def describe(self) -> dict:
        """What a record keeps of an image: enough to find it again, not the pixels."""
        return {"sha256": self.sha256, "mime": self.mime, "width": self.width,
                "height": self.height, "bytes": len(self.data)}
