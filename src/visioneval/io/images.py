"""Encoded images as they travel to models: the stored bytes, never re-encoded.

SalBench's cues (a slightly different colour, size or angle) are exactly what a lossy
re-encode or a downscale can damage, so an `Image` keeps the dataset's PNG/JPEG bytes and
only reads the header to learn the pixel size.

Also the two guards every reader of images shares: `read_file` (an image file named by a
data or case file: a regular file of at most `MAX_FILE_BYTES`, checked before it is read)
and `open_to_decode` (a header checked against `MAX_DECODE_PIXELS` before any pixel is
decoded, for the places that decode: thumbnails, the popout baseline, CANVAS metrics).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    """The bytes are not an image a model server would accept, or an image file that is
    not read (see `read_file`, `open_to_decode`)."""


class TooManyPixels(ImageError):
    """An image beyond `MAX_DECODE_PIXELS`: fine to send to a model, not to decode here."""


MAX_FILE_BYTES = 64_000_000
"""The largest image file read from a path (64 MB). Benchmark images are kilobytes to a few
megabytes (a 24-megapixel JPEG is about 10 MB); the limit stops a data file from making a
run read a disk image or a log into memory."""

MAX_DECODE_PIXELS = 40_000_000
"""The most pixels visioneval decodes (40 Mpx, more than 8K UHD's 33 Mpx or a 36 Mpx camera
frame). Decoding costs 4 bytes a pixel in Pillow and more in the popout baseline's arrays,
so a 0.5 MB PNG of 170 Mpx would take 1 GB or more; an image beyond the limit is refused
from its header. Models are still sent the stored bytes, whatever their size."""

_NOT_REGULAR = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISSOCK, "a socket"))


def outside(path: Path, folder: Path, real_folder: Path | None = None) -> Path | None:
    """Where `path` leads (symlinks resolved) when that is outside `folder`, else None.
    `real_folder` is `folder.resolve()` when the caller has it (one resolve per data file
    instead of one per row)."""
    try:
        target = path.resolve()
        inside = target.is_relative_to(real_folder or folder.resolve())
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise ImageError(f"{path}: cannot resolve ({exc})") from None
    return None if inside else target


def read_file(path: Path, shown: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of an image file; ImageError starting with `shown` when it is missing,
    not a regular file (a FIFO, device, directory or socket: refused from `stat`, never
    opened for reading) or over `limit` bytes (refused before it is read)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ImageError(f"{shown}: no such file") from None
    except OSError as exc:
        raise ImageError(f"{shown}: cannot read ({exc.strerror})") from None
    _check_regular(info, shown, limit)
    try:
        # O_NONBLOCK: should the file have become a FIFO since the stat, opening it does not
        # wait for a writer; fstat below then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ImageError(f"{shown}: cannot read ({exc.strerror})") from None
    with os.fdopen(fd, "rb", buffering=0) as fh:
        info = os.fstat(fh.fileno())
        _check_regular(info, shown, limit)
        # The size and one byte more (read(n) allocates n bytes: never the limit's worth
        # for a small file); a file that grew since is read on up to the limit only.
        data = fh.read(info.st_size + 1)
        if len(data) > info.st_size:
            data += fh.read(limit + 1 - len(data)) or b""
    if len(data) > limit:
        raise ImageError(f"{shown}: over the {limit / 1e6:g} MB limit for an image file")
    return data


def _check_regular(info: os.stat_result, shown: str, limit: int) -> None:
    for test, kind in _NOT_REGULAR:
        if test(info.st_mode):
            raise ImageError(f"{shown}: {kind}, not a regular file")
    if not stat.S_ISREG(info.st_mode):
        raise ImageError(f"{shown}: not a regular file")
    if info.st_size > limit:
        raise ImageError(f"{shown}: {info.st_size / 1e6:.1f} MB, over the {limit / 1e6:g} MB "
                         "limit for an image file")


_BOMB_SIZE = re.compile(r"\((\d+) pixels\)")


def _pil_open(source: Any, formats: list[str] | None = None) -> PILImage.Image:
    """Pillow's open, without its DecompressionBombWarning: between 89 and 178 Mpx Pillow
    prints one, while visioneval's own limit (`decode_problem`, 40 Mpx) refuses the image
    in its own line where it would be decoded, and sends it as stored otherwise. Beyond
    178 Mpx Pillow's DecompressionBombError still comes through."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PILImage.DecompressionBombWarning)
        return PILImage.open(source, formats=formats)


def open_to_decode(source: bytes | Path, name: str = "",
                   limit: int = MAX_DECODE_PIXELS) -> PILImage.Image:
    """The image opened lazily (its header read, no pixel decoded), for the caller to
    decode and close (`with open_to_decode(...) as im: im.convert(...)`). Raises
    TooManyPixels beyond `limit` pixels and ImageError when it cannot be opened, their
    messages starting with `name` when given. Pillow's own decompression-bomb limit
    (178 Mpx, a process-wide setting left alone) stays behind this one."""
    where = f"{name}: " if name else ""
    try:
        image = _pil_open(io.BytesIO(source) if isinstance(source, bytes) else source)
    except PILImage.DecompressionBombError as exc:
        raise TooManyPixels(f"{where}{_bomb_pixels(exc)}, beyond the {limit / 1e6:g} Mpx "
                            "visioneval decodes") from None
    except FileNotFoundError:
        raise ImageError(f"{where}no such file") from None
    except PILImage.UnidentifiedImageError:
        raise ImageError(f"{where}not an image Pillow can identify") from None
    except Exception as exc:  # Pillow raises many types for corrupt files
        raise ImageError(f"{where}not an image Pillow can open ({exc})") from None
    problem = decode_problem(*image.size, limit)
    if problem:
        image.close()
        raise TooManyPixels(f"{where}{problem}")
    return image


def _bomb_pixels(exc: Exception) -> str:
    """The pixel count in Pillow's DecompressionBombError, as Mpx."""
    found = _BOMB_SIZE.search(str(exc))
    return f"{int(found.group(1)) / 1e6:.0f} Mpx" if found else "too many pixels"


def decode_problem(width: int, height: int, limit: int = MAX_DECODE_PIXELS) -> str | None:
    """Why an image of this size is not decoded (`open_to_decode`'s words), or None."""
    if width * height <= limit:
        return None
    return (f"{width}x{height} pixels ({width * height / 1e6:.0f} Mpx), beyond the "
            f"{limit / 1e6:g} Mpx visioneval decodes")


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
            with _pil_open(io.BytesIO(data), [PIL_FORMAT[mime]]) as pil:
                width, height = pil.size
                if verify:
                    pil.verify()
        except PILImage.UnidentifiedImageError:
            raise ImageError(f"corrupt or truncated {mime} data ({len(data)} bytes)") from None
        except PILImage.DecompressionBombError as exc:  # not corrupt: too big to open
            raise ImageError(f"{mime} of {_bomb_pixels(exc)}, beyond Pillow's "
                             "decompression-bomb limit") from None
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
