"""Parquet page headers, read from the file with Thrift's compact protocol.

A column chunk is a sequence of pages, each a `PageHeader` (a Thrift struct in the compact
protocol) followed by its body. The fields used here are those of `PageHeader`,
`DataPageHeader`, `DataPageHeaderV2` and `DictionaryPageHeader` in the Parquet format's
`parquet.thrift` (apache/parquet-format); the encoding is Thrift's compact protocol
specification (apache/thrift, doc/specs/thrift-compact-protocol.md). Fields not used here
(statistics, CRC, size statistics, anything newer) are skipped whatever their type.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# PageType
DATA_PAGE, INDEX_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 1, 2, 3
# Encoding (the ones this package reads)
PLAIN, PLAIN_DICTIONARY, RLE, RLE_DICTIONARY = 0, 2, 3, 8

MAX_DEPTH = 16  # nesting deeper than this is a corrupt header, not a real one
MAX_SKIP = 1 << 30  # a skipped binary field longer than this is corrupt

# compact protocol type ids
_TRUE, _FALSE, _I8, _I16, _I32, _I64, _DOUBLE, _BINARY = 1, 2, 3, 4, 5, 6, 7, 8
_LIST, _SET, _MAP, _STRUCT = 9, 10, 11, 12


class HeaderError(ValueError):
    """The bytes are not a page header (corrupt or truncated)."""


@dataclass(frozen=True)
class PageHeader:
    """What reading a page needs: its kind, sizes and encodings. `size` is the header's own
    length in bytes; the body follows it. Level fields are those of the page's version."""

    kind: int  # DATA_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2, INDEX_PAGE or another number
    size: int
    uncompressed_size: int
    compressed_size: int
    num_values: int = 0
    encoding: int = PLAIN
    def_encoding: int = RLE  # v1 only
    rep_encoding: int = RLE  # v1 only
    num_nulls: int = 0  # v2 only
    def_length: int = 0  # v2 only: bytes of definition levels, never compressed
    rep_length: int = 0  # v2 only
    is_compressed: bool = True  # v2 only


class _Compact:
    """Reads compact-protocol values through `read(n)`, counting the bytes used."""

    def __init__(self, read: Callable[[int], bytes]) -> None:
        self._read = read
        self.used = 0

    def bytes_(self, n: int) -> bytes:
        data = self._read(n)
        if len(data) != n:
            raise HeaderError("page header is cut short")
        self.used += n
        return data

    def varint(self) -> int:
        value = shift = 0
        while True:
            byte = self.bytes_(1)[0]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
            if shift > 63:
                raise HeaderError("page header has a varint over 64 bits")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def struct(self, depth: int = 0) -> dict[int, Any]:
        """A struct's fields by id; nested structs are dicts, other skipped values None."""
        if depth > MAX_DEPTH:
            raise HeaderError("page header nests too deep")
        fields: dict[int, Any] = {}
        last = 0
        while True:
            byte = self.bytes_(1)[0]
            if byte == 0:
                return fields
            kind, delta = byte & 0x0F, byte >> 4
            last = last + delta if delta else self.zigzag()
            fields[last] = self.value(kind, depth)

    def value(self, kind: int, depth: int) -> Any:
        if kind in (_TRUE, _FALSE):
            return kind == _TRUE
        if kind == _I8:
            return self.bytes_(1)[0]
        if kind in (_I16, _I32, _I64):
            return self.zigzag()
        if kind == _DOUBLE:
            self.bytes_(8)
            return None
        if kind == _BINARY:
            size = self.varint()
            if size > MAX_SKIP:
                raise HeaderError(f"page header has a {size}-byte field")
            while size:  # skipped in pieces: statistics may hold long values
                size -= len(self.bytes_(min(size, 1 << 16)))
            return None
        if kind in (_LIST, _SET):
            head = self.bytes_(1)[0]
            count = head >> 4 if head >> 4 != 15 else self.varint()
            for _ in range(count):
                self.element(head & 0x0F, depth + 1)
            return None
        if kind == _MAP:
            count = self.varint()
            if count:
                types = self.bytes_(1)[0]
                for _ in range(count):
                    self.element(types >> 4, depth + 1)
                    self.element(types & 0x0F, depth + 1)
            return None
        if kind == _STRUCT:
            return self.struct(depth + 1)
        raise HeaderError(f"page header has an unknown field type {kind}")

    def element(self, kind: int, depth: int) -> None:
        if kind in (_TRUE, _FALSE):  # a boolean inside a container is one byte
            self.bytes_(1)
        else:
            self.value(kind, depth)


def read_page_header(read: Callable[[int], bytes]) -> PageHeader:
    """The page header at the reader's position; `read(n)` returns up to n bytes."""
    reader = _Compact(read)
    fields = reader.struct()
    try:
        kind, uncompressed, compressed = fields[1], fields[2], fields[3]
    except KeyError:
        raise HeaderError("page header lacks its type or sizes") from None
    if not all(isinstance(v, int) and v >= 0 for v in (kind, uncompressed, compressed)):
        raise HeaderError("page header has a negative size or type")
    base = {"kind": kind, "size": reader.used, "uncompressed_size": uncompressed,
            "compressed_size": compressed}
    if kind == DATA_PAGE:
        page = _required(fields, 5, (1, 2, 3, 4))
        return PageHeader(**base, num_values=page[1], encoding=page[2], def_encoding=page[3],
                          rep_encoding=page[4])
    if kind == DICTIONARY_PAGE:
        page = _required(fields, 7, (1, 2))
        return PageHeader(**base, num_values=page[1], encoding=page[2])
    if kind == DATA_PAGE_V2:
        page = _required(fields, 8, (1, 2, 3, 4, 5, 6))
        if page[5] < 0 or page[6] < 0 or page[5] + page[6] > compressed:
            raise HeaderError("page header's level lengths do not fit the page")
        return PageHeader(**base, num_values=page[1], num_nulls=page[2], encoding=page[4],
                          def_length=page[5], rep_length=page[6],
                          is_compressed=page.get(7, True) is not False)
    return PageHeader(**base)


def _required(fields: dict[int, Any], field: int, ids: tuple[int, ...]) -> dict[int, Any]:
    """The nested header struct `field`, which must hold integer fields `ids`."""
    page = fields.get(field)
    if not isinstance(page, dict) or not all(
            isinstance(page.get(i), int) and not isinstance(page.get(i), bool) for i in ids):
        raise HeaderError(f"page header lacks the fields of its type (field {field})")
    if page[1] < 0:
        raise HeaderError("page header has a negative value count")
    return page
