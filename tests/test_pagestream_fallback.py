"""What `pagestream` does not stream falls back to pyarrow and still gives pyarrow's rows
(LZ4, delta encodings, a snappy copy reaching past the window, dictionaries read
out of order too often), and a corrupt or truncated file is one DataError line naming the
file, the row group and the column. `iter_rows` is asked to stream every binary column
(`parquet.ALWAYS`): these files' values and pages are small, which it would otherwise leave
to pyarrow; a corrupt file read by pyarrow alone is one line too."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_pagestream import IMAGE, TIGHT, _leaf, _pages, _values, _write

from visioneval.io import pagestream, parquet
from visioneval.io.parquet import DataError


def _rows(path: Path) -> list[dict]:
    return [r.values for r in parquet.iter_rows([path], pq.read_table(path).column_names,
                                                streaming=parquet.ALWAYS)]


def test_lz4_is_read_by_pyarrow(tmp_path):
    """pyarrow writes LZ4_RAW: raw blocks, which pyarrow cannot decompress as a stream."""
    path = _write(tmp_path / "z.parquet", "hf", "LZ4", "1.0", 1024, "plain")
    assert _rows(path) == pq.read_table(path).to_pylist()
    with pytest.raises(pagestream.Unsupported, match="LZ4"):
        _leaf(path, "image.bytes", 0)


@pytest.mark.parametrize("encoding", ["DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY"])
@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_delta_encodings_are_read_by_pyarrow(tmp_path, encoding, version):
    path = _write(tmp_path / "d.parquet", "binary", "SNAPPY", version, 1024, "plain",
                  column_encoding={"image": encoding})
    assert _rows(path) == pq.read_table(path).to_pylist()
    with pytest.raises(pagestream.Unsupported, match="encoding"):
        list(pagestream.stream_values(_leaf(path, "image", 0)))


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _snappy_with_far_copies(plain: bytes, copied: int, far: int, size: int) -> bytes:
    """A valid snappy block of `plain`, exactly `size` bytes long, whose last `copied` bytes
    are copies from `far` bytes back (which Google's compressor never writes past 64 KiB).
    The length is matched by splitting the literal that precedes them into 1-byte ones."""
    head = len(plain) - copied
    copies = -(-copied // 64)
    small = size - len(_varint(len(plain))) - 5 * copies - 4 - head
    assert 0 <= small <= head
    big = head - small
    out = bytearray(_varint(len(plain)))
    out += bytes([62 << 2]) + (big - 1).to_bytes(3, "little") + plain[:big]
    for i in range(big, head):
        out += b"\x00" + plain[i:i + 1]
    for start in range(head, len(plain), 64):
        n = min(64, len(plain) - start)
        out += bytes([(n - 1) << 2 | 3]) + far.to_bytes(4, "little")
    assert len(out) == size
    return bytes(out)


def test_a_snappy_copy_past_the_window_falls_back_from_that_row(tmp_path):
    rnd = random.Random(3)
    head = rnd.randbytes(4_400_000)  # over BufferSizes().whole_page: streamed, not whole
    far = 70_000
    big = head + head[-far:]
    values = [b"first", rnd.randbytes(500), big, b"last"]
    path = tmp_path / "far.parquet"
    pq.write_table(pa.table({"image": pa.array(values, pa.binary())}), path,
                   compression="SNAPPY", use_dictionary=False, write_batch_size=1,
                   data_page_size=1)
    chunk = _leaf(path, "image", 0)
    # rewrite the big value's page with the same bytes as far copies
    data = bytearray(path.read_bytes())
    position = chunk.start
    for header in _pages(chunk):
        body = position + header.size
        if header.uncompressed_size > 4_000_000:
            plain = pa.decompress(bytes(data[body:body + header.compressed_size]),
                                  header.uncompressed_size, codec="snappy", asbytes=True)
            assert plain.endswith(big) and plain[-far:] == plain[-2 * far:-far]
            crafted = _snappy_with_far_copies(plain, far, far, header.compressed_size)
            assert pa.decompress(crafted, len(plain), codec="snappy", asbytes=True) == plain
            data[body:body + header.compressed_size] = crafted
        position = body + header.compressed_size
    path.write_bytes(bytes(data))
    streamed = pagestream.stream_values(chunk)
    assert [next(streamed)[1] for _ in range(2)] == values[:2]
    with pytest.raises(pagestream.Unsupported, match="window"):
        next(streamed)
    assert pq.read_table(path).column("image").to_pylist() == values
    assert [r.values["image"] for r in parquet.iter_rows([path], ["image"],
                                                         streaming=parquet.ALWAYS)] == values


def test_a_dictionary_read_out_of_order_too_often_falls_back(tmp_path):
    rnd = random.Random(5)
    a, b, c = (rnd.randbytes(2000) for _ in range(3))
    values = [a, b] * 20 + [c]  # with no cache, every `a` after the first re-reads
    path = tmp_path / "repeat.parquet"
    pq.write_table(pa.table({"image": pa.array(values, pa.binary())}), path,
                   use_dictionary=True)
    chunk = _leaf(path, "image", 0)
    with pytest.raises(pagestream.Unsupported, match="out of order"):
        list(pagestream.stream_values(chunk, TIGHT))
    few = pagestream.BufferSizes(read_chunk=1000, whole_page=0, dictionary_cache=4500)  # a and b
    assert [v for _, v in pagestream.stream_values(chunk, few)] == values
    fewer_repeats = values[:10] + [c]  # 4 re-reads: under the limit
    pq.write_table(pa.table({"image": pa.array(fewer_repeats, pa.binary())}), path)
    assert [v for _, v in pagestream.stream_values(_leaf(path, "image", 0), TIGHT)] == \
        fewer_repeats
    assert [r.values["image"] for r in parquet.iter_rows([path], ["image"],
                                                         streaming=parquet.ALWAYS)
            ] == fewer_repeats


# -- corrupt and truncated files ---------------------------------------------------------------

def _hf_file(tmp_path: Path, codec: str, page_rows: int = 1024) -> Path:
    rows = [{"image": {"bytes": v or b"", "path": f"{i}.png"}, "image_id": f"i{i}"}
            for i, v in enumerate(_values())]
    path = tmp_path / "corrupt.parquet"
    table = pa.table({"image": pa.array([r["image"] for r in rows], IMAGE),
                      "image_id": [r["image_id"] for r in rows]})
    pq.write_table(table, path, compression=codec, use_dictionary=False,
                   write_batch_size=page_rows)
    return path


def _damage(path: Path, offset: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[offset:offset + len(data)] = data
    path.write_bytes(bytes(raw))


def _error_line(path: Path, streaming: parquet.Streaming = parquet.ALWAYS) -> str:
    with pytest.raises(DataError) as caught:
        list(parquet.iter_rows([path], ["image", "image_id"], streaming=streaming))
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


def _pyarrow_error_line(path: Path) -> str:
    """The line when the file's small pages are left to pyarrow, as by default."""
    assert not parquet.streamed_leaves(path, pq.ParquetFile(path), 0)
    message = _error_line(path, parquet.STREAMING)
    assert "row group 0: " in message
    return message


def test_a_garbage_page_header_is_one_data_error(tmp_path):
    path = _hf_file(tmp_path, "SNAPPY")
    chunk = _leaf(path, "image.bytes", 0)
    _damage(path, chunk.start, b"\xff" * 12)
    with pytest.raises(pagestream.PageError, match="bad page header"):
        list(pagestream.stream_values(chunk))
    message = _error_line(path)
    assert "row group 0, column image.bytes: bad page header" in message
    _pyarrow_error_line(path)


@pytest.mark.parametrize("buffers", [pagestream.BufferSizes(), TIGHT])
@pytest.mark.parametrize("codec", ["SNAPPY", "GZIP", "ZSTD", "BROTLI"])
def test_a_corrupt_compressed_page_is_one_data_error(tmp_path, codec, buffers):
    path = _hf_file(tmp_path, codec)
    chunk = _leaf(path, "image.bytes", 0)
    header = _pages(chunk)[0]
    # snappy's length preamble; gzip's and zstd's magic numbers; brotli's window bits
    _damage(path, chunk.start + header.size, b"\xff\xff\xff\x01")
    with pytest.raises(pagestream.PageError, match=codec.lower()):
        list(pagestream.stream_values(chunk, buffers))
    assert f"row group 0, column image.bytes: {codec.lower()}" in _error_line(path)
    _pyarrow_error_line(path)


def test_a_value_longer_than_its_page_is_one_data_error(tmp_path):
    path = _hf_file(tmp_path, "NONE")
    chunk = _leaf(path, "image.bytes", 0)
    header = _pages(chunk)[0]
    body = chunk.start + header.size
    levels = int.from_bytes(path.read_bytes()[body:body + 4], "little")
    _damage(path, body + 4 + levels, (1 << 30).to_bytes(4, "little"))  # the first length
    with pytest.raises(pagestream.PageError, match="runs past its page"):
        list(pagestream.stream_values(chunk))
    assert "row group 0, column image.bytes" in _error_line(path)
    _pyarrow_error_line(path)


def test_a_truncated_file_is_one_data_error(tmp_path):
    path = _hf_file(tmp_path, "SNAPPY")
    chunk = _leaf(path, "image.bytes", 0)
    raw = path.read_bytes()
    path.write_bytes(raw[:chunk.start + (chunk.end - chunk.start) // 2])
    with pytest.raises(pagestream.PageError, match="file ends"):
        list(pagestream.stream_values(chunk, TIGHT))  # the footer read before the cut
    assert "not a readable parquet file" in _error_line(path)
