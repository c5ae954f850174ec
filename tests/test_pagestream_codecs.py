"""The pieces `pagestream` is built from: the streaming snappy decoder (against pyarrow's
snappy compressor, in any input chunking), Thrift compact page headers (unknown fields of
every type skipped) and the RLE/bit-packed hybrid levels (the format's worked example).
Corrupt input is always the module's own error, never an IndexError or a hang."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from visioneval.io import pagestream, snappystream
from visioneval.io.pageheader import (
    DATA_PAGE_V2,
    DICTIONARY_PAGE,
    HeaderError,
    read_page_header,
)


def _samples() -> dict[str, bytes]:
    rnd = random.Random(11)
    words = [b"red", b"green", b"blue", b"which", b"colour", b"is", b"the", b"odd", b"one"]
    return {
        "empty": b"",
        "one byte": b"a",
        "noise": rnd.randbytes(300_000),
        "text": b" ".join(rnd.choice(words) for _ in range(60_000)),
        "a run": b"z" * 200_000,  # copies that overlap their own output
        "noise then repeats": rnd.randbytes(70_000) * 3,
        "periodic": bytes(range(7)) * 40_000,
    }


@pytest.mark.parametrize("name", list(_samples()))
@pytest.mark.parametrize("step", [1, 5, 4096, 1 << 20])
def test_snappy_stream_equals_the_data_in_any_chunking(name, step):
    data = _samples()[name]
    packed = pa.compress(data, codec="snappy", asbytes=True)
    chunks = [packed[i:i + step] for i in range(0, len(packed), step)]
    if step == 1 and len(data) > 100_000:
        chunks = chunks[:200] + [packed[200:]]  # byte by byte through the head only
    pieces = list(snappystream.decompress(chunks, len(data)))
    assert b"".join(pieces) == data
    assert all(len(p) <= snappystream.WINDOW + snappystream.FLUSH + (1 << 20) for p in pieces)


def test_snappy_checks_lengths_and_its_window():
    data = _samples()["text"]
    packed = pa.compress(data, codec="snappy", asbytes=True)
    with pytest.raises(snappystream.SnappyError, match="the page says"):
        list(snappystream.decompress([packed], len(data) + 1))
    with pytest.raises(snappystream.SnappyError, match="ends"):
        list(snappystream.decompress([packed[:len(packed) // 2]], len(data)))
    with pytest.raises(snappystream.WindowExceeded):  # text repeats from further back
        list(snappystream.decompress([packed], len(data), window=16))
    with pytest.raises(snappystream.SnappyError, match="offset 0"):
        list(snappystream.decompress([b"\x08\x00a\x01\x00"]))  # a 1-byte literal, offset 0
    with pytest.raises(snappystream.SnappyError, match="before the output"):
        list(snappystream.decompress([b"\x08\x00a\x02\x05\x00"]))


@pytest.mark.slow
def test_corrupt_snappy_is_a_snappy_error_never_a_crash():
    rnd = random.Random(1)
    data = _samples()["text"][:20_000] + _samples()["noise"][:5000]
    packed = bytearray(pa.compress(data, codec="snappy", asbytes=True))
    errors = 0
    for _ in range(400):
        broken = bytearray(packed)
        for _ in range(rnd.randrange(1, 4)):
            broken[rnd.randrange(len(broken))] = rnd.randrange(256)
        cut = bytes(broken[:rnd.randrange(len(broken) + 1)] if rnd.random() < 0.3 else broken)
        try:
            out = b"".join(snappystream.decompress([cut], len(data)))
        except (snappystream.SnappyError, snappystream.WindowExceeded):
            errors += 1
            continue
        assert len(out) == len(data)  # a literal's bytes changed: snappy has no checksum
    assert errors > 100


class _Compact:
    """Writes Thrift compact-protocol structs: {field id: (type id, value)}."""

    @staticmethod
    def varint(n: int) -> bytes:
        out = bytearray()
        while n >= 0x80:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        return bytes(out + bytes([n]))

    def zigzag(self, n: int) -> bytes:
        return self.varint((n << 1) ^ (n >> 63))

    def value(self, kind: int, value) -> bytes:
        if kind in (1, 2):
            return b""
        if kind == 3:
            return bytes([value])
        if kind in (4, 5, 6):
            return self.zigzag(value)
        if kind == 7:
            return b"\x00" * 8
        if kind == 8:
            return self.varint(len(value)) + value
        if kind == 9:
            element, items = value
            head = bytes([len(items) << 4 | element]) if len(items) < 15 else \
                bytes([0xF0 | element]) + self.varint(len(items))
            body = b"".join(bytes([1]) if element in (1, 2) else self.value(element, item)
                            for item in items)
            return head + body
        if kind == 11:
            key, val, pairs = value
            return self.varint(len(pairs)) + (bytes([key << 4 | val]) if pairs else b"") + \
                b"".join(self.value(key, k) + self.value(val, v) for k, v in pairs)
        assert kind == 12
        return self.struct(value)

    def struct(self, fields: dict) -> bytes:
        out, last = bytearray(), 0
        for field in sorted(fields):
            kind, value = fields[field]
            if 0 < field - last <= 15:
                out.append((field - last) << 4 | kind)
            else:  # the long form: the id follows as a zigzag varint
                out += bytes([kind]) + self.zigzag(field)
            out += self.value(kind, value)
            last = field
        return bytes(out + b"\x00")


def _reader(data: bytes):
    position = 0

    def read(n: int) -> bytes:
        nonlocal position
        position += n
        return data[position - n:position]

    return read


def test_page_headers_skip_unknown_fields_of_every_type():
    writer = _Compact()
    statistics = {1: (8, b"max" * 5000), 2: (8, b"min"), 3: (6, 0), 5: (1, True)}
    unknown = {
        1: (9, (12, [{1: (5, 7)}, {2: (8, b"x")}])),  # a list of structs
        2: (11, (8, 12, [(b"k", {1: (7, 0.5)})])),  # a map of string to struct
        3: (9, (1, [True, False, True])),  # a list of booleans: a byte each
        4: (9, (5, list(range(20)))),  # a list over 14 long
        40: (12, {1: (12, {1: (12, {1: (3, 9)})})}),  # structs in structs, a long field id
    }
    v2 = {1: (5, 10), 2: (5, 3), 3: (5, 10), 4: (5, 8), 5: (5, 4), 6: (5, 0), 7: (2, False),
          8: (12, statistics), 9: (12, unknown)}
    data = writer.struct({1: (5, DATA_PAGE_V2), 2: (5, 200), 3: (5, 120), 4: (5, -12345),
                          8: (12, v2), 20: (12, unknown), 300: (8, b"future")})
    header = read_page_header(_reader(data + b"page body"))
    assert (header.kind, header.uncompressed_size, header.compressed_size) == \
        (DATA_PAGE_V2, 200, 120)
    assert (header.num_values, header.num_nulls, header.encoding) == (10, 3, 8)
    assert (header.def_length, header.rep_length, header.is_compressed) == (4, 0, False)
    assert header.size == len(data)
    dictionary = writer.struct({1: (5, DICTIONARY_PAGE), 2: (5, 9), 3: (5, 9),
                                7: (12, {1: (5, 2), 2: (5, 0), 3: (1, True)})})
    assert read_page_header(_reader(dictionary)).num_values == 2


def test_corrupt_headers_are_header_errors_never_a_crash():
    writer = _Compact()
    good = writer.struct({1: (5, 0), 2: (5, 100), 3: (5, 80), 5: (12, {1: (5, 4), 2: (5, 0),
                                                                      3: (5, 3), 4: (5, 3)})})
    assert read_page_header(_reader(good)).num_values == 4
    with pytest.raises(HeaderError, match="cut short"):
        read_page_header(_reader(good[:-3]))
    with pytest.raises(HeaderError, match="lacks"):
        read_page_header(_reader(writer.struct({1: (5, 0), 2: (5, 1), 3: (5, 1)})))
    rnd = random.Random(2)
    errors = 0
    for _ in range(500):
        broken = bytearray(good)
        broken[rnd.randrange(len(broken))] = rnd.randrange(256)
        try:
            read_page_header(_reader(bytes(broken[:rnd.randrange(1, len(broken) + 1)])))
        except HeaderError:
            errors += 1
    assert errors > 250  # most are cut short; none raised anything else


def test_levels_decode_the_formats_worked_example_and_runs():
    # Parquet's Encodings.md: 0..7 bit-packed at width 3 are 10001000 11000110 11111010
    assert pagestream.levels(bytes([3, 0b10001000, 0b11000110, 0b11111010]), 3, 8) == \
        list(range(8))
    assert pagestream.levels(bytes([3, 0b10001000, 0b11000110, 0b11111010]), 3, 5) == \
        list(range(5))
    # a run of 300 ones (header 600 as a varint), then 8 bit-packed values at width 1
    run = bytes([0xD8, 0x04, 1, 3, 0b01010101])
    assert pagestream.levels(run, 1, 308) == [1] * 300 + [1, 0] * 4
    assert pagestream.levels(b"", 0, 4) == [0] * 4
    with pytest.raises(pagestream.PageError, match="end after 300"):
        pagestream.levels(run[:3], 1, 308)
