"""Image columns streamed out of parquet pages (`pagestream`) give exactly pyarrow's values,
whatever the codec, page version, page size, encoding and row-group layout, and hold a
bounded window while doing it, even when a whole row group is one 40 MB page."""

from __future__ import annotations

import itertools
import random
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from visioneval.io import pagestream, parquet
from visioneval.io.pageheader import DATA_PAGE, DICTIONARY_PAGE, read_page_header

N = 40
IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
# buffer sizes that stream every page and dictionary through the Python decoders, in small
# reads, keeping no dictionary values: every path of the reader on small files
TIGHT = pagestream.BufferSizes(read_chunk=1000, whole_page=0, dictionary_cache=0)


def _cell(rnd: random.Random, i: int) -> bytes | None:
    kind = i % 6
    if kind == 0:
        return rnd.randbytes(rnd.randrange(1, 3000))  # noise: snappy emits literals
    if kind == 1:
        return (f"pixel row {i}, " * rnd.randrange(1, 400)).encode()  # snappy emits copies
    if kind == 2:
        return b""
    if kind == 3:
        return None
    if kind == 4:
        return rnd.randbytes(20_000)
    return bytes(range(256)) * 30 + rnd.randbytes(100)


def _values(seed: int = 0) -> list[bytes | None]:
    rnd = random.Random(seed)
    values = [_cell(rnd, i) for i in range(N)]
    values[13], values[31], values[32] = values[0], values[4], values[1]  # repeats
    return values


def _table(kind: str) -> pa.Table:
    values = _values()
    if kind == "binary":
        return pa.table({"image": pa.array(values, pa.binary()),
                         "question": [f"q{i}" for i in range(N)]})
    images = [None if i % 9 == 7 else {"bytes": v, "path": None if i % 4 == 2 else f"{i}.png"}
              for i, v in enumerate(values)]
    return pa.table({"question": [f"q{i}" for i in range(N)],
                     "image": pa.array(images, IMAGE), "answer": ["a"] * N})


def _write(path: Path, kind: str, codec: str, version: str, page_rows: int,
           encoding: str, **extra) -> Path:
    options = {"plain": {"use_dictionary": False},
               "dictionary": {"use_dictionary": True},
               # a dictionary page, dictionary-encoded pages, then PLAIN pages (the writer
               # gives up on the dictionary past its size limit)
               "dictionary then plain": {"use_dictionary": True,
                                         "dictionary_pagesize_limit": 8000}}[encoding]
    # a page is cut once over data_page_size, checked every write_batch_size rows
    pq.write_table(_table(kind), path, compression=codec, data_page_version=version,
                   write_batch_size=page_rows, data_page_size=1 if page_rows == 1 else None,
                   row_group_size=16, **options, **extra)
    return path


def _leaf(path: Path, name: str, group: int) -> pagestream.LeafChunk:
    handle = pq.ParquetFile(path)
    leaf = next(i for i in range(len(handle.schema)) if handle.schema.column(i).path == name)
    column = handle.schema.column(leaf)
    return pagestream.leaf_chunk(path, handle.metadata, group, leaf,
                                 column.max_definition_level, column.max_repetition_level)


def _pages(chunk: pagestream.LeafChunk):
    """The page headers of a column chunk, read with our own header parser."""
    with open(chunk.file, "rb") as fh:
        position, headers = chunk.start, []
        while position < chunk.end:
            fh.seek(position)
            header = read_page_header(fh.read)
            headers.append(header)
            position += header.size + header.compressed_size
    return headers


CODECS = ["NONE", "SNAPPY", "GZIP", "ZSTD", "BROTLI"]
CASES = list(itertools.product(["binary", "hf"], CODECS, ["1.0", "2.0"],
                               [1, 1024], ["plain", "dictionary", "dictionary then plain"]))


@pytest.mark.parametrize(("kind", "codec", "version", "page_rows", "encoding"), CASES)
def test_rows_equal_pyarrow_and_the_streamer_reads_every_page(tmp_path, kind, codec, version,
                                                              page_rows, encoding):
    path = _write(tmp_path / "t.parquet", kind, codec, version, page_rows, encoding)
    table = pq.read_table(path)
    columns = table.column_names
    # both sides of the threshold: every binary column streamed, and these small pages
    # left to pyarrow (the default)
    for streaming in (parquet.ALWAYS, parquet.STREAMING):
        streamed = parquet.streamed_leaves(path, pq.ParquetFile(path), 0, streaming)
        assert bool(streamed) == (streaming is parquet.ALWAYS)
        assert [r.values for r in parquet.iter_rows([path], columns, streaming=streaming)
                ] == table.to_pylist()
        # the same through a different column order and a subset
        picked = list(reversed(columns))[:2]
        assert [r.values for r in parquet.iter_rows([path], picked, streaming=streaming)
                ] == pq.read_table(path, columns=picked).to_pylist()
    # the streamer itself read every page (no fallback), with both sizes
    name = "image" if kind == "binary" else "image.bytes"
    cells = table.column("image").to_pylist()
    expected = [c if kind == "binary" else (c is not None, c and c["bytes"]) for c in cells]
    kinds, pages = set(), []
    for buffers in (pagestream.BufferSizes(), TIGHT):
        got = []
        for group in range(pq.ParquetFile(path).metadata.num_row_groups):
            chunk = _leaf(path, name, group)
            if buffers is TIGHT:
                kinds |= {h.kind for h in _pages(chunk)}
                assert list(pagestream.page_headers(path, chunk.start, chunk.end)) == \
                    _pages(chunk)
                pages += [h.num_values for h in _pages(chunk) if h.kind != DICTIONARY_PAGE]
            got += [value if kind == "binary" else (level >= 1, value)
                    for level, value in pagestream.stream_values(chunk, buffers)]
        assert got == expected
    assert (DICTIONARY_PAGE in kinds) == (encoding != "plain")
    # a page per row (nulls share the next row's), or a page per row group (3 groups)
    assert (len(pages) > N / 2 and max(pages) <= 3) if page_rows == 1 else len(pages) == 3


def test_page_checksums_statistics_and_a_required_column(tmp_path):
    """Headers with a CRC (field 4) and statistics are read; a non-nullable binary column
    has no definition levels."""
    schema = pa.schema([pa.field("image", pa.binary(), nullable=False)])
    values = [v or b"x" for v in _values()]
    path = tmp_path / "crc.parquet"
    pq.write_table(pa.table({"image": values}, schema=schema), path, compression="SNAPPY",
                   write_page_checksum=True, write_statistics=True, use_dictionary=False,
                   write_batch_size=3, data_page_size=1)
    for streaming in (parquet.ALWAYS, parquet.STREAMING):
        assert [r.values["image"] for r in parquet.iter_rows([path], ["image"],
                                                             streaming=streaming)] == values
    chunk = _leaf(path, "image", 0)
    assert chunk.max_def == 0 and len(_pages(chunk)) == 14
    assert list(pagestream.page_headers(path, chunk.start, chunk.end)) == _pages(chunk)
    assert [v for _, v in pagestream.stream_values(chunk, TIGHT)] == values


def test_large_binary_and_a_struct_of_only_bytes(tmp_path):
    only = pa.struct([("bytes", pa.large_binary())])
    values = _values()
    cells = [None if i % 5 == 1 else {"bytes": v} for i, v in enumerate(values)]
    table = pa.table({"raw": pa.array(values, pa.large_binary()), "image": pa.array(cells, only)})
    path = tmp_path / "large.parquet"
    pq.write_table(table, path, row_group_size=7)
    for streaming in (parquet.ALWAYS, parquet.STREAMING):
        assert [r.values for r in parquet.iter_rows([path], ["image", "raw"],
                                                    streaming=streaming)] == \
            pq.read_table(path, columns=["image", "raw"]).to_pylist()


def test_hf_writer_rows_come_out_equal_across_files_limit_and_wanted(tmp_path):
    rows = [{"image": {"bytes": v or b"", "path": f"{i}.png"}, "question": f"q{i}",
             "answer": "a", "image_id": f"i{i}"} for i, v in enumerate(_values())]
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    parquet.write_hf_parquet(first, rows, ["image"], row_group=100, page_rows=1024)
    parquet.write_hf_parquet(second, rows[:5], ["image"], row_group=2, page_rows=1)
    for streaming in (parquet.ALWAYS, parquet.STREAMING):
        got = list(parquet.iter_rows([first, second], ["image", "image_id"],
                                     streaming=streaming))
        assert [r.values for r in got] == [{"image": r["image"], "image_id": r["image_id"]}
                                           for r in rows + rows[:5]]
    assert [r.index for r in parquet.iter_rows([first, second], ["image"], limit=42)] == \
        list(range(42))
    wanted = {3, 39, 41, 44}
    picked = list(parquet.iter_rows([first, second], ["image"], wanted=wanted))
    assert [r.values["image"] for r in picked] == [rows[3]["image"], rows[39]["image"],
                                                   rows[1]["image"], rows[4]["image"]]


def test_the_reader_is_chosen_by_each_row_groups_pages_and_values(tmp_path):
    """Pages of 40 values under `values_from`: in group 0 a page is 5/8 of `pages_over`
    (the chunk is over it, so its headers are read: pyarrow), in group 1 over it
    (streamed), in group 2 tiny (pyarrow, without a look at the headers). A page of exactly
    `pages_over` bytes is pyarrow's; one byte less streams it. The rows are pyarrow's."""
    rule = parquet.STREAMING
    rnd = random.Random(9)
    small, under = rule.pages_over // 64, rule.pages_over // 36  # both under values_from
    assert under < rule.values_from
    values = ([rnd.randbytes(small) for _ in range(80)]
              + [rnd.randbytes(under) for _ in range(80)] + [b"small"] * 80)
    path = tmp_path / "three.parquet"
    pq.write_table(pa.table({"image": pa.array(values, pa.binary()), "n": range(240)}), path,
                   compression="NONE", use_dictionary=False, row_group_size=80,
                   write_batch_size=40, data_page_size=1)
    handle = pq.ParquetFile(path)
    largest = [max(h.uncompressed_size for h in _pages(_leaf(path, "image", g)))
               for g in range(3)]
    assert largest[0] < rule.pages_over < largest[1] and largest[2] < 1000
    assert handle.metadata.row_group(0).column(0).total_uncompressed_size > rule.pages_over
    assert [parquet.streamed_leaves(path, handle, g) for g in range(3)] == [set(), {0}, set()]
    exactly = parquet.Streaming(pages_over=largest[1])
    assert parquet.streamed_leaves(path, handle, 1, exactly) == set()
    less = parquet.Streaming(pages_over=largest[1] - 1)
    assert parquet.streamed_leaves(path, handle, 1, less) == {0}
    assert [r.values for r in parquet.iter_rows([path], ["n", "image"])] == \
        pq.read_table(path, columns=["n", "image"]).to_pylist()


@pytest.mark.parametrize(("size", "streamed"), [(100_000, set()), (200_000, {0})])
def test_big_values_are_streamed_whatever_their_pages(tmp_path, size, streamed):
    """A page per value, each far under `pages_over`: values of 200 KB (over `values_from`)
    are streamed, values of 100 KB left to pyarrow."""
    values = [random.Random(i).randbytes(size) for i in range(6)]
    path = tmp_path / "values.parquet"
    pq.write_table(pa.table({"image": pa.array(values, pa.binary())}), path,
                   use_dictionary=False, write_batch_size=1, data_page_size=1)
    assert len(_pages(_leaf(path, "image", 0))) == 6
    assert parquet.streamed_leaves(path, pq.ParquetFile(path), 0) == streamed
    assert [r.values["image"] for r in parquet.iter_rows([path], ["image"])] == values


@pytest.mark.parametrize(("page_rows", "streamed"), [(1, {0}), (40, set())])
def test_a_chunk_of_tiny_pages_is_streamed(tmp_path, page_rows, streamed):
    """A chunk over `pages_over` whose pages average under `tiny_pages` (1 KB pages here)
    is streamed, though each page is small; pages of 40 KB are left to pyarrow."""
    values = [random.Random(i).randbytes(1000) for i in range(200)]
    path = tmp_path / "tiny.parquet"
    pq.write_table(pa.table({"image": pa.array(values, pa.binary())}), path,
                   compression="NONE", use_dictionary=False, write_batch_size=page_rows,
                   data_page_size=1)
    pages = _pages(_leaf(path, "image", 0))
    assert len(pages) == 200 // page_rows
    assert max(h.uncompressed_size for h in pages) < 100_000 < \
        pq.ParquetFile(path).metadata.row_group(0).column(0).total_uncompressed_size
    rule = parquet.Streaming(pages_over=100_000)
    assert parquet.streamed_leaves(path, pq.ParquetFile(path), 0, rule) == streamed
    assert [r.values["image"] for r in parquet.iter_rows([path], ["image"], streaming=rule)
            ] == values


# -- bounded memory --------------------------------------------------------------------------

IMAGES = 32
IMAGE_BYTES = 1_250_000  # 32 x 1.25 MB: a 40 MB page


BIG = [("SNAPPY", False), ("SNAPPY", True), ("ZSTD", False)]  # codec, dictionary


@pytest.fixture(scope="module")
def one_big_page(tmp_path_factory):
    """HF-style files whose whole 40 MB row group of incompressible images is one page:
    pyarrow's default pages, with a dictionary (its default) and without, and zstd."""
    rnd = random.Random(7)
    images = [rnd.randbytes(IMAGE_BYTES) for _ in range(IMAGES)]
    table = pa.table({"image": pa.array([{"bytes": b, "path": f"{i}.png"}
                                         for i, b in enumerate(images)], IMAGE),
                      "image_id": [f"i{i}" for i in range(IMAGES)]})
    root = tmp_path_factory.mktemp("big")
    files = {}
    for codec, dictionary in BIG:
        files[codec, dictionary] = root / f"{codec}-{dictionary}.parquet"
        pq.write_table(table, files[codec, dictionary], compression=codec,
                       use_dictionary=dictionary)
    return images, files


@pytest.mark.slow
@pytest.mark.parametrize(("codec", "dictionary"), BIG[:2])
def test_a_40_mb_page_streams_through_a_few_mb(one_big_page, codec, dictionary):
    images, files = one_big_page
    chunk = _leaf(files[codec, dictionary], "image.bytes", 0)
    pages = _pages(chunk)
    big = pages[0]  # the premise: one page holds every image
    assert big.kind == (DICTIONARY_PAGE if dictionary else DATA_PAGE)
    assert big.uncompressed_size > IMAGES * IMAGE_BYTES
    tracemalloc.start()
    try:
        count = 0
        for (_, value), image in zip(pagestream.stream_values(chunk), images, strict=True):
            assert value == image
            count += 1
            del value
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == IMAGES
    # an image being read, the one before it, a read chunk, the snappy window and output,
    # and the recently used values a streamed dictionary keeps for repeats
    cache = pagestream.BufferSizes().dictionary_cache if dictionary else 0
    assert peak < 5 * IMAGE_BYTES + (4 << 20) + cache, peak
    assert peak < big.uncompressed_size / 3


@pytest.mark.parametrize(("codec", "dictionary"), BIG)
def test_iter_rows_never_asks_pyarrow_for_the_page(one_big_page, codec, dictionary):
    """pyarrow's own allocations while `iter_rows` reads the file stay far below the page
    (pyarrow alone holds the page compressed and decompressed: over 80 MB here); zstd
    pages go through pyarrow's streaming decompressor, 1 MiB at a time."""
    images, files = one_big_page
    before = pa.total_allocated_bytes()
    most = 0
    got = []
    for row in parquet.iter_rows([files[codec, dictionary]], ["image", "image_id"]):
        most = max(most, pa.total_allocated_bytes() - before)
        got.append(row.values["image"]["bytes"] == images[row.index])
    assert got == [True] * IMAGES
    assert most < 8 << 20, most
