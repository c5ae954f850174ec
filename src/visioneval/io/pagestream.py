"""Stream the values of a large BYTE_ARRAY column chunk (an image column) in bounded memory.

pyarrow reads a column a data page at a time and holds the whole page, compressed and
decompressed; its writer puts up to 1024 rows in one page (and a row group's first 1024
values in one dictionary page), so a row group of images is one page of hundreds of MB.
This reader walks the column chunk's pages itself (headers: `pageheader`) and decodes each
page's body as a stream: the definition levels (small, read whole), then the values, one
at a time, from the file through a streaming decompressor. It holds one input chunk, the
decompressor's window and the value being read, whatever the page's size.

Read here: BYTE_ARRAY leaves that are not repeated; UNCOMPRESSED, SNAPPY, GZIP, ZSTD and
BROTLI pages; data pages v1 and v2; PLAIN values and dictionary-encoded ones (RLE_DICTIONARY
or PLAIN_DICTIONARY indices into a PLAIN dictionary page, itself streamed in index order).
Anything else raises `Unsupported` (the caller reads the column with pyarrow); bytes that
cannot be a valid page raise `PageError`.
"""

from __future__ import annotations

import io
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa

from visioneval.io import snappystream
from visioneval.io.pageheader import (
    DATA_PAGE,
    DATA_PAGE_V2,
    DICTIONARY_PAGE,
    INDEX_PAGE,
    PLAIN,
    PLAIN_DICTIONARY,
    RLE,
    RLE_DICTIONARY,
    HeaderError,
    PageHeader,
    read_page_header,
)

# codecs streamed here: snappy by `snappystream`, gzip by zlib, zstd and brotli by pyarrow's
# streaming decompressor (raw snappy and LZ4 have no streaming form in pyarrow)
CODECS = ("UNCOMPRESSED", "SNAPPY", "GZIP", "ZSTD", "BROTLI")
RESTART_LIMIT = 16  # dictionary re-reads (for repeats out of the cache) before giving up


@dataclass(frozen=True)
class BufferSizes:
    """The sizes of what the reader holds in memory. A page up to `whole_page` bytes
    uncompressed is read and decompressed whole, in C (pyarrow's codecs: fast on
    compressible data); a larger one is streamed `read_chunk` bytes at a time.
    `dictionary_cache` bytes of recently used values of a streamed dictionary are kept for
    rows that repeat them."""

    read_chunk: int = 1 << 20
    whole_page: int = 4 << 20
    dictionary_cache: int = 4 << 20


class PageError(ValueError):
    """The column chunk's bytes are not valid pages (corrupt or truncated)."""


class Unsupported(Exception):
    """Valid parquet this reader does not stream: read the column another way."""


@dataclass(frozen=True)
class LeafChunk:
    """Where one leaf column's chunk of one row group lies in a file, and how to read it."""

    file: Path
    start: int  # the first page (the dictionary page, if any)
    end: int
    codec: str
    num_values: int
    max_def: int


def leaf_chunk(file: Path, metadata, group: int, leaf: int, max_def: int,
               max_rep: int) -> LeafChunk:
    """The chunk of leaf `leaf` in row group `group` (pyarrow `FileMetaData`), or
    Unsupported when its metadata already rules streaming out."""
    column = metadata.row_group(group).column(leaf)
    if column.physical_type != "BYTE_ARRAY" or max_rep != 0:
        raise Unsupported(f"a {column.physical_type} column with repetition {max_rep}")
    if column.compression not in CODECS:
        raise Unsupported(f"{column.compression} compression")
    if column.file_path:
        raise Unsupported("a column chunk in another file")
    start, end = chunk_span(metadata, group, leaf)
    return LeafChunk(file, start, end, column.compression, column.num_values, max_def)


def chunk_span(metadata, group: int, leaf: int) -> tuple[int, int]:
    """Where the chunk of leaf `leaf` in row group `group` lies: its first page (the
    dictionary page, if any) and its end."""
    column = metadata.row_group(group).column(leaf)
    start = column.data_page_offset
    dictionary = column.dictionary_page_offset
    if column.has_dictionary_page and dictionary and 0 < dictionary < start:
        start = dictionary
    return start, start + column.total_compressed_size


HEADER_BLOCK = 1 << 16  # bytes read at a time for page headers (several small pages')
HEADER_ROOM = 1 << 13  # a header is parsed out of the block when this much of it is left


def page_headers(file: Path, start: int, end: int) -> Iterator[PageHeader]:
    """The headers of the pages between `start` and `end` (a column chunk), read without
    their bodies: how big a chunk's pages are is known before any is read. Headers are
    parsed out of HEADER_BLOCK-byte reads; a longer one (big statistics) from the file."""
    with open(file, "rb") as fh:
        position = start
        block, block_start = io.BytesIO(), start
        block_end = start
        while position < end:
            if not (block_start <= position
                    and (position + HEADER_ROOM <= block_end or block_end == end)):
                fh.seek(position)
                data = fh.read(min(HEADER_BLOCK, end - position))
                block, block_start, block_end = io.BytesIO(data), position, position + len(data)
            block.seek(position - block_start)
            try:
                header = read_page_header(block.read)
            except HeaderError:
                fh.seek(position)
                try:
                    header = read_page_header(fh.read)
                except HeaderError as exc:
                    raise PageError(f"bad page header at byte {position}: {exc}") from None
            body = position + header.size
            position = body + header.compressed_size
            if position > end:
                raise PageError(f"a page at byte {body} runs past its column chunk")
            yield header


def stream_values(chunk: LeafChunk, buffers: BufferSizes = BufferSizes()
                  ) -> Iterator[tuple[int, bytes | None]]:
    """(definition level, value) for each row of the chunk, in order: the value is None
    when the level is below the leaf's maximum (the leaf or a parent is null)."""
    with open(chunk.file, "rb") as fh, pa.OSFile(str(chunk.file)) as arrow_file:
        source = _Source(fh, arrow_file, chunk.end, buffers)
        dictionary: _Dictionary | None = None
        position, count = chunk.start, 0
        while count < chunk.num_values:
            if position >= chunk.end:
                raise PageError(f"the column chunk ends after {count} of {chunk.num_values} "
                                "values")
            try:
                header = read_page_header(source.reader(position))
            except HeaderError as exc:
                raise PageError(f"bad page header at byte {position}: {exc}") from None
            body = position + header.size
            position = body + header.compressed_size
            if position > chunk.end:
                raise PageError(f"a page at byte {body} runs past its column chunk")
            if header.kind == DICTIONARY_PAGE:
                dictionary = _Dictionary(source, body, header, chunk.codec)
            elif header.kind in (DATA_PAGE, DATA_PAGE_V2):
                if count + header.num_values > chunk.num_values:
                    raise PageError(f"pages hold more than the chunk's {chunk.num_values} "
                                    "values")
                yield from _data_page(source, body, header, chunk, dictionary)
                count += header.num_values
            elif header.kind != INDEX_PAGE:
                raise Unsupported(f"page type {header.kind}")


class _Source:
    """Positioned reads of one file, never past `end` (the column chunk's end)."""

    def __init__(self, fh: BinaryIO, arrow_file: pa.NativeFile, end: int,
                 buffers: BufferSizes) -> None:
        self._fh = fh
        self._arrow_file = arrow_file
        self._end = end
        self.buffers = buffers

    def read(self, offset: int, size: int) -> bytes:
        if offset + size > self._end:
            raise PageError(f"a read at byte {offset} runs past the column chunk")
        self._fh.seek(offset)
        data = self._fh.read(size)
        if len(data) != size:
            raise PageError(f"the file ends at byte {offset + len(data)}, inside a page")
        return data

    def buffer(self, offset: int, size: int) -> pa.Buffer:
        """`size` bytes from `offset` in an Arrow buffer (a whole page: Arrow's memory pool
        reuses its memory page after page, where a new Python bytes object would not)."""
        if offset + size > self._end:
            raise PageError(f"a read at byte {offset} runs past the column chunk")
        self._arrow_file.seek(offset)
        data = self._arrow_file.read_buffer(size)
        if data.size != size:
            raise PageError(f"the file ends at byte {offset + data.size}, inside a page")
        return data

    def chunks(self, offset: int, size: int) -> Iterator[bytes]:
        """`size` bytes from `offset`, `buffers.read_chunk` at a time."""
        while size > 0:
            step = min(size, self.buffers.read_chunk)
            yield self.read(offset, step)
            offset += step
            size -= step

    def reader(self, offset: int) -> Callable[[int], bytes]:
        """A `read(n)` from `offset` on, short at the chunk's end (for page headers)."""
        position = offset

        def read(n: int) -> bytes:
            nonlocal position
            n = max(0, min(n, self._end - position))
            self._fh.seek(position)
            data = self._fh.read(n)
            position += len(data)
            return data

        return read


class _Bytes:
    """A page body's uncompressed bytes, read in exact lengths from a stream of chunks
    (bytes or buffers: a value is copied once, out of its chunk)."""

    def __init__(self, chunks: Iterator[bytes | memoryview], size: int) -> None:
        self._chunks = chunks
        self._view = memoryview(b"")
        self._pos = 0
        self.left = size

    def read(self, n: int) -> bytes:
        if n > self.left:
            raise PageError(f"a {n}-byte value runs past its page ({self.left} bytes left)")
        self.left -= n
        end = self._pos + n
        if end <= len(self._view):
            piece = bytes(self._view[self._pos:end])
            self._pos = end
            return piece
        parts = [self._view[self._pos:]]
        need = n - len(parts[0])
        self._view, self._pos = memoryview(b""), 0
        while need:
            chunk = next(self._chunks, None)
            if chunk is None:
                raise PageError("a page's data ends before its stated size")
            view = memoryview(chunk)
            if len(view) <= need:
                parts.append(view)
                need -= len(view)
            else:
                parts.append(view[:need])
                self._view, self._pos = view, need
                need = 0
        return b"".join(parts)

    def u32(self) -> int:
        return int.from_bytes(self.read(4), "little")


def _body(source: _Source, offset: int, size: int, uncompressed: int, codec: str
          ) -> _Bytes:
    """The uncompressed bytes of a page body of `size` bytes at `offset`: read and
    decompressed whole (in C) up to `buffers.whole_page`, else streamed."""
    if codec == "UNCOMPRESSED" and size != uncompressed:
        raise PageError(f"an uncompressed page of {size} bytes says {uncompressed}")
    if uncompressed <= source.buffers.whole_page:
        data = source.buffer(offset, size)
        whole = (memoryview(data) if codec == "UNCOMPRESSED"
                 else _decompress_whole(data, uncompressed, codec))
        return _Bytes(iter([whole]), uncompressed)
    if codec == "UNCOMPRESSED":
        return _Bytes(source.chunks(offset, size), size)
    if codec == "SNAPPY":
        return _Bytes(_snappy(source.chunks(offset, size), uncompressed), uncompressed)
    if codec == "GZIP":
        return _Bytes(_gunzip(source.chunks(offset, size), uncompressed,
                              source.buffers.read_chunk), uncompressed)
    return _Bytes(_arrow_stream(source.chunks(offset, size), codec, uncompressed,
                                source.buffers.read_chunk), uncompressed)


def _decompress_whole(data: pa.Buffer, size: int, codec: str) -> memoryview:
    try:
        out = pa.decompress(data, decompressed_size=size, codec=codec.lower())
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise PageError(f"{codec.lower()} page does not decompress ({exc})") from None
    if out.size != size:
        raise PageError(f"a page decompresses to {out.size} bytes, its header says {size}")
    return memoryview(out)


def _snappy(chunks: Iterator[bytes], size: int) -> Iterator[bytes]:
    try:
        yield from snappystream.decompress(chunks, size)
    except snappystream.SnappyError as exc:
        raise PageError(str(exc)) from None
    except snappystream.WindowExceeded as exc:
        raise Unsupported(str(exc)) from None


def _gunzip(chunks: Iterator[bytes], size: int, step: int) -> Iterator[bytes]:
    """A GZIP page body (gzip or zlib framing, several members allowed), `step` bytes of
    output at a time."""
    inflater = zlib.decompressobj(wbits=47)  # 32 + 15: gzip or zlib header, 32 KiB window
    produced = 0
    try:
        for chunk in chunks:
            data = chunk
            while data:
                out = inflater.decompress(data, step)
                produced += len(out)
                if out:
                    yield out
                data = inflater.unconsumed_tail
                if inflater.eof and inflater.unused_data:  # another gzip member follows
                    data = inflater.unused_data + data
                    inflater = zlib.decompressobj(wbits=47)
        out = inflater.flush()
    except zlib.error as exc:
        raise PageError(f"gzip page does not decompress ({exc})") from None
    produced += len(out)
    if out:
        yield out
    if not inflater.eof or produced != size:
        raise PageError(f"a gzip page holds {produced} bytes, its header says {size}")


def _arrow_stream(chunks: Iterator[bytes], codec: str, size: int, step: int
                  ) -> Iterator[bytes]:
    """A ZSTD or BROTLI page body through pyarrow's streaming decompressor, `step` bytes of
    output at a time (it decompresses into a 1 MiB buffer, whatever the page's size)."""
    raw = pa.PythonFile(_ChunkReader(chunks), mode="r")
    produced = 0
    try:
        with pa.CompressedInputStream(raw, codec.lower()) as stream:
            while piece := stream.read(step):
                produced += len(piece)
                yield piece
    except (pa.ArrowException, OSError) as exc:
        raise PageError(f"{codec.lower()} page does not decompress ({exc})") from None
    if produced != size:
        raise PageError(f"a {codec.lower()} page holds {produced} bytes, its header says "
                        f"{size}")


class _ChunkReader(io.RawIOBase):
    """A readable file over an iterator of byte chunks (for pyarrow's `PythonFile`)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        super().__init__()
        self._chunks = chunks
        self._left = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        if not self._left:
            self._left = memoryview(next(self._chunks, b""))
        n = min(len(target), len(self._left))
        target[:n] = self._left[:n]
        self._left = self._left[n:]
        return n


def levels(data: bytes, bit_width: int, count: int) -> list[int]:
    """`count` values of Parquet's RLE/bit-packed hybrid encoding (levels, dictionary
    indices): runs of one repeated value and groups of 8 values packed LSB first."""
    if bit_width == 0:
        return [0] * count
    if bit_width > 32:
        raise PageError(f"a bit width of {bit_width}")
    out: list[int] = []
    mask = (1 << bit_width) - 1
    width = (bit_width + 7) // 8
    pos = 0
    while len(out) < count:
        if pos >= len(data):
            raise PageError(f"levels end after {len(out)} of {count} values")
        header = shift = 0
        while True:
            byte = data[pos]
            pos += 1
            header |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
            if pos >= len(data) or shift > 35:
                raise PageError("a bad run header in levels")
        wanted = count - len(out)
        if header & 1:  # bit-packed: header >> 1 groups of 8 values
            size = (header >> 1) * bit_width
            n = min((header >> 1) * 8, wanted)
            if pos + (n * bit_width + 7) // 8 > len(data):
                raise PageError(f"levels end after {len(out)} of {count} values")
            bits = int.from_bytes(data[pos:pos + size], "little")
            pos += size
            out.extend((bits >> (i * bit_width)) & mask for i in range(n))
        else:  # a run: header >> 1 copies of one value
            value = int.from_bytes(data[pos:pos + width], "little")
            pos += width
            out.extend([value] * min(header >> 1, wanted))
    return out


def _data_page(source: _Source, body: int, header: PageHeader, chunk: LeafChunk,
               dictionary: _Dictionary | None) -> Iterator[tuple[int, bytes | None]]:
    count = header.num_values
    width = chunk.max_def.bit_length()
    if header.kind == DATA_PAGE:
        data = _body(source, body, header.compressed_size, header.uncompressed_size,
                     chunk.codec)
        if chunk.max_def == 0:
            defs = None
        elif header.def_encoding != RLE:
            raise Unsupported(f"definition levels in encoding {header.def_encoding}")
        else:
            defs = levels(data.read(data.u32()), width, count)
    else:
        level_bytes = header.rep_length + header.def_length
        if header.rep_length:
            raise Unsupported("repetition levels")
        raw = source.read(body, level_bytes) if level_bytes else b""
        defs = levels(raw, width, count) if chunk.max_def else None
        codec = chunk.codec if header.is_compressed else "UNCOMPRESSED"
        data = _body(source, body + level_bytes, header.compressed_size - level_bytes,
                     header.uncompressed_size - level_bytes, codec)
    present = count if defs is None else sum(1 for d in defs if d == chunk.max_def)
    values: Iterator[bytes]
    if header.encoding == PLAIN:
        values = _plain(data, present)
    elif header.encoding in (RLE_DICTIONARY, PLAIN_DICTIONARY):
        if dictionary is None:
            raise Unsupported("dictionary-encoded values before any dictionary page")
        rest = data.read(data.left)  # a byte with the indices' bit width, then the indices
        if present and not rest:
            raise PageError("a dictionary-encoded page without its indices")
        indices = levels(rest[1:], rest[0], present) if present else []
        values = map(dictionary.get, indices)
    else:
        raise Unsupported(f"values in encoding {header.encoding}")
    if defs is None:
        for value in values:
            yield chunk.max_def, value
        return
    top = chunk.max_def
    for level in defs:
        yield (level, next(values)) if level == top else (level, None)


def _plain(data: _Bytes, count: int) -> Iterator[bytes]:
    for _ in range(count):
        yield data.read(data.u32())


class _Dictionary:
    """A PLAIN dictionary page's values by index: a small page is decoded whole; a large one
    is streamed in index order (how a writer numbers first occurrences), keeping recently
    used values for repeats and re-reading from the start for older ones."""

    def __init__(self, source: _Source, body: int, header: PageHeader, codec: str) -> None:
        if header.encoding not in (PLAIN, PLAIN_DICTIONARY):
            raise Unsupported(f"a dictionary page in encoding {header.encoding}")
        self.count = header.num_values
        self._open = lambda: _plain(_body(source, body, header.compressed_size,
                                          header.uncompressed_size, codec), self.count)
        self._all = (list(self._open()) if header.uncompressed_size <= source.buffers.whole_page
                     else None)
        self._keep = source.buffers.dictionary_cache
        self._stream: Iterator[bytes] | None = None
        self._next = 0  # index of the value the stream yields next
        self._cache: OrderedDict[int, bytes] = OrderedDict()
        self._cached = 0
        self._restarts = 0

    def get(self, index: int) -> bytes:
        if not 0 <= index < self.count:
            raise PageError(f"dictionary index {index} outside its {self.count} values")
        if self._all is not None:
            return self._all[index]
        value = self._cache.get(index)
        if value is not None:
            self._cache.move_to_end(index)
            return value
        if self._stream is None or index < self._next:
            if self._stream is not None:  # an old value no longer cached: read it again
                self._restarts += 1
                if self._restarts > RESTART_LIMIT:
                    raise Unsupported(f"dictionary values repeat out of order over "
                                      f"{RESTART_LIMIT} times")
            self._stream, self._next = self._open(), 0
        while True:
            value = next(self._stream)
            self._next += 1
            if self._next > index:
                break
        self._cache[index] = value
        self._cached += len(value)
        while self._cached > self._keep and len(self._cache) > 1:
            self._cached -= len(self._cache.popitem(last=False)[1])
        return value
