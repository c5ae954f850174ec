"""Decompress a raw Snappy block as a stream, holding a bounded window of its output.

Parquet's SNAPPY codec is the raw block format (not the framed one): a varint with the
uncompressed length, then elements, each a literal (bytes copied from the input) or a copy
(bytes repeated from `offset` bytes back in the output). The format is Google's, described
in its `format_description.txt`; this decoder is written from that description.

Compressors (Google's, and the ones that follow it) cut the input into 64 KiB blocks and
never copy across them, so no copy reaches further back than 64 KiB: keeping that much
history is enough to stream the output a chunk at a time, however large the page. A copy
that reaches further back than the history kept is not guessed at: `WindowExceeded` tells
the caller to read the data some other way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

WINDOW = 1 << 16  # output history kept: the block size of the common compressors
FLUSH = 1 << 20  # output handed on once this much is past the window


class SnappyError(ValueError):
    """The compressed data is not a valid Snappy block (corrupt or truncated)."""


class WindowExceeded(Exception):
    """A copy reaches further back than the history kept: valid, but not streamable here."""


def decompress(chunks: Iterable[bytes], expected: int | None = None,
               window: int = WINDOW) -> Iterator[bytes]:
    """The uncompressed bytes of the Snappy block that `chunks` hold, in pieces of about
    FLUSH bytes. Memory holds one input chunk, `window` bytes of history and one piece.
    `expected` is the length the caller knows (a page's uncompressed size): a block that
    says otherwise is a SnappyError."""
    source = iter(chunks)
    buf = b""
    pos = 0
    length = shift = 0
    while True:  # the preamble: the uncompressed length as a varint
        if pos >= len(buf):
            buf, pos = next(source, b""), 0
            if not buf:
                raise SnappyError("snappy block ends inside its length")
        byte = buf[pos]
        pos += 1
        length |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
        if shift > 35:
            raise SnappyError("snappy length varint is too long")
    if expected is not None and length != expected:
        raise SnappyError(f"snappy block holds {length} bytes, the page says {expected}")
    try:
        yield from _elements(source, buf, pos, length, window)
    except IndexError:  # an element's operand cut off by the end of the input
        raise SnappyError("snappy block ends inside an element") from None


def _elements(source: Iterator[bytes], buf: bytes, pos: int, length: int, window: int
              ) -> Iterator[bytes]:
    """The output of the elements after the preamble (one loop, kept lean: it runs once per
    element, and compressible data has an element every few bytes)."""
    out = bytearray()
    room = length  # the bytes `out` may still reach: the length less what was handed on
    flush_at = window + FLUSH
    view = memoryview(buf)
    end = len(buf)
    while len(out) < room:
        if pos > end - 5:  # a tag and its longest operand are 5 bytes
            rest = buf[pos:]
            for chunk in source:
                rest += chunk
                if len(rest) >= 5:
                    break
            buf, pos, end = rest, 0, len(rest)
            view = memoryview(buf)
            if not buf:
                raise SnappyError(f"snappy block ends after {length - room + len(out)} of "
                                  f"{length} bytes")
        tag = buf[pos]
        kind = tag & 3
        if kind:  # a copy of `size` bytes from `offset` back
            if kind == 1:  # length 4-11, an 11-bit offset
                size = ((tag >> 2) & 7) + 4
                offset = ((tag >> 5) << 8) | buf[pos + 1]
                pos += 2
            elif kind == 2:  # length 1-64, a 16-bit offset
                size = (tag >> 2) + 1
                offset = buf[pos + 1] | (buf[pos + 2] << 8)
                pos += 3
            else:  # length 1-64, a 32-bit offset
                size = (tag >> 2) + 1
                offset = int.from_bytes(buf[pos + 1:pos + 5], "little")
                pos += 5
            have = len(out)
            if not 0 < offset <= have or offset > window or pos > end:
                _bad_copy(offset, length - room + have, window, pos > end)
            if have + size > room:
                raise SnappyError("snappy copy runs past the block's length")
            start = have - offset
            if size <= offset:
                out += out[start:start + size]
            else:  # the copy overlaps its own output: the last `offset` bytes repeat
                out += (out[start:] * (size // offset + 1))[:size]
        else:  # a literal: its length - 1 in the tag, or in the 1-4 bytes after it
            size = (tag >> 2) + 1
            if size <= 60:
                pos += 1
            else:
                extra = size - 60
                size = int.from_bytes(buf[pos + 1:pos + 1 + extra], "little") + 1
                pos += 1 + extra
                if pos > end:
                    raise SnappyError("snappy block ends inside a literal's length")
            if len(out) + size > room:
                raise SnappyError("snappy literal runs past the block's length")
            if pos + size <= end:
                out += buf[pos:pos + size] if size < 256 else view[pos:pos + size]
                pos += size
            else:  # the literal continues in the next chunks
                out += view[pos:]
                size -= end - pos
                buf, pos = b"", 0
                while size:
                    chunk = next(source, b"")
                    if not chunk:
                        raise SnappyError("snappy block ends inside a literal")
                    if len(chunk) <= size:
                        out += chunk
                        size -= len(chunk)
                    else:
                        out += memoryview(chunk)[:size]
                        buf, pos = chunk, size
                        size = 0
                    if len(out) >= flush_at:
                        cut = len(out) - window
                        yield _head(out, cut)
                        room -= cut
                view, end = memoryview(buf), len(buf)
        if len(out) >= flush_at:
            cut = len(out) - window
            yield _head(out, cut)
            room -= cut
    if out:
        yield bytes(out)


def _head(out: bytearray, cut: int) -> bytes:
    """The first `cut` bytes of `out`, removed from it (copied once: no slice in between)."""
    with memoryview(out) as view, view[:cut] as head:
        piece = bytes(head)
    del out[:cut]
    return piece


def _bad_copy(offset: int, produced: int, window: int, cut_short: bool) -> None:
    if cut_short:
        raise SnappyError("snappy block ends inside a copy")
    if offset == 0:
        raise SnappyError("snappy copy offset 0")
    if offset > produced:
        raise SnappyError(f"snappy copy offset {offset} is before the output")
    # valid, but further back than the history kept (whether or not `out` still holds it:
    # the same every time)
    raise WindowExceeded(f"snappy copy offset {offset} is past the {window}-byte window")
