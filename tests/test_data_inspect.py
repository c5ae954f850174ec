"""`visioneval data inspect` shows each column chunk's pages and the reader visioneval uses
for it, and `visioneval data repage` rewrites parquet files with small pages and the same
values: both on real parquet files written here."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import flat, invoke

from visioneval.io import pagestream, parquet
from visioneval.io.parquet import write_hf_parquet

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
MEDIUM = 100_000  # under Streaming().values_from: streamed only in a page over 4 MiB
BIG = 600_000  # over values_from: streamed whatever the page


def _hf_rows(n: int, size: int, seed: int = 0) -> list[dict]:
    rnd = random.Random(seed)
    return [{"image": {"bytes": rnd.randbytes(size), "path": f"{i}.png"},
             "question": f"Which object differs? ({i})", "answer": "color",
             "image_id": f"img-{i}"} for i in range(n)]


def _dataset(root: Path) -> Path:
    """Three configs as the Hub stores them: P3 with pyarrow's default pages (a row group's
    images in one page: 4.8 MB, then 1.2 MB), P3_box with small images in visioneval's
    8-row pages, P3_box_img with big images in small pages."""
    write_hf_parquet(root / "P3" / "shard_00000.parquet", _hf_rows(60, MEDIUM), ["image"],
                     row_group=48, page_rows=1024)
    write_hf_parquet(root / "P3_box" / "shard_00000.parquet", _hf_rows(10, 5_000, 1),
                     ["image"], row_group=4, page_rows=8)
    write_hf_parquet(root / "P3_box_img" / "shard_00000.parquet", _hf_rows(6, BIG, 2),
                     ["image"], row_group=6, page_rows=1)
    return root


def _table(stdout: str, file: str) -> list[list[str]]:
    """The rows of one file's table, split into cells (cells hold no double space)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{file}:"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("  ") or not line.strip()[0].isdigit():
            break
        rows.append([c.strip() for c in line.strip().split("  ") if c.strip()])
    return rows


def _image_pages(path: Path) -> list[list[pagestream.PageHeader]]:
    """The image leaf's page headers, row group by row group."""
    handle = pq.ParquetFile(path)
    leaf = next(i for i in range(len(handle.schema))
                if handle.schema.column(i).path == "image.bytes")
    return [list(pagestream.page_headers(path, *pagestream.chunk_span(handle.metadata, g,
                                                                        leaf)))
            for g in range(handle.metadata.num_row_groups)]


def test_inspect_shows_pages_sizes_and_readers_within_100_columns(tmp_path):
    root = _dataset(tmp_path / "salbench")
    result = invoke("data", "inspect", root)
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 100 for line in result.stdout.splitlines())
    assert "P3/shard_00000.parquet: 60 rows, 2 row groups," in result.stdout
    big = _table(result.stdout, "P3/shard_00000.parquet")
    assert [r[:2] for r in big] == [[str(g), c] for g in (0, 1) for c in
                                    ("image.bytes", "image.path", "question", "answer",
                                     "image_id")]
    images = {int(r[0]): r for r in big if r[1] == "image.bytes"}
    # group 0: 48 images of 100 KB in one page (4.8 MB): streamed; group 1: 12 (1.2 MB)
    assert images[0][2:4] == ["48", "2"]  # rows; pages: the dictionary page and its indices
    assert images[0][-1] == "streamed" and images[1][-1] == "pyarrow"
    assert images[0][4].endswith(" MB") and 4.8 <= float(images[0][5].split()[0]) < 4.9
    assert 1.2 <= float(images[1][5].split()[0]) < 1.3
    assert all(r[-1] == "pyarrow" for r in big if r[1] != "image.bytes")
    # the sizes are the page headers' (the streamer's parser: checked against pyarrow's
    # pages in tests/test_pagestream.py)
    largest = max(h.uncompressed_size for h in _image_pages(root / "P3/shard_00000.parquet")[0])
    assert abs(largest / 1e6 - float(images[0][5].split()[0])) < 0.05
    small = _table(result.stdout, "P3_box/shard_00000.parquet")
    assert {r[0] for r in small} == {"0", "1", "2"}
    assert all(r[-1] == "pyarrow" for r in small)
    big = _table(result.stdout, "P3_box_img/shard_00000.parquet")
    assert [r[-1] for r in big] == ["streamed"] + ["pyarrow"] * 4
    assert float(big[0][5].split()[0]) < 1.3  # two 600 KB images a page: values decide
    assert "Streamed: 2 of 30 column chunks (a page over 4 MiB, values of 128 KiB or more" \
        in result.stdout
    assert "visioneval data repage" in result.stdout


def test_inspect_names_what_the_streamer_leaves_to_pyarrow_and_fits_long_names(tmp_path):
    rnd = random.Random(2)
    name = "an_image_column_with_a_very_long_descriptive_name"
    table = pa.table({name: pa.array([rnd.randbytes(BIG) for _ in range(8)], pa.binary())})
    pq.write_table(table, tmp_path / "lz4.parquet", compression="LZ4")
    pq.write_table(table, tmp_path / "delta.parquet", use_dictionary=False,
                   column_encoding={name: "DELTA_LENGTH_BYTE_ARRAY"})
    result = invoke("data", "inspect", tmp_path)
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 100 for line in result.stdout.splitlines())
    assert _table(result.stdout, "lz4.parquet")[0][-1] == "pyarrow: LZ4"
    assert _table(result.stdout, "delta.parquet")[0][-1] == "pyarrow: delta encoding"
    assert _table(result.stdout, "lz4.parquet")[0][1] == "an_image_c…iptive_name"
    assert parquet.streamed_leaves(tmp_path / "lz4.parquet",
                                   pq.ParquetFile(tmp_path / "lz4.parquet"), 0) == {0}


def test_inspect_reports_a_bad_file_in_one_line_and_goes_on(tmp_path):
    root = _dataset(tmp_path / "salbench")
    (root / "P3_box" / "broken.parquet").write_bytes(b"PAR1 not really")
    result = invoke("data", "inspect", root)
    assert result.exit_code == 2
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and "broken.parquet: not a readable parquet file" in errors[0]
    assert "P3_box/shard_00000.parquet: 10 rows" in result.stdout
    assert invoke("data", "inspect", tmp_path / "nothing").exit_code == 2


def test_repage_keeps_values_schema_and_row_groups_with_small_pages(tmp_path):
    root = _dataset(tmp_path / "salbench")
    out = tmp_path / "repaged"
    result = invoke("data", "repage", root, out, "--page-rows", "3")
    assert result.exit_code == 0, result.output
    assert "P3/shard_00000.parquet: 60 rows, 2 row groups; largest page 4.8 MB -> 1.2 MB" \
        in flat(result.stdout)
    for config in ("P3", "P3_box", "P3_box_img"):
        source = root / config / "shard_00000.parquet"
        target = out / config / "shard_00000.parquet"
        before, after = pq.read_table(source), pq.read_table(target)
        assert after.equals(before)
        assert after.schema.metadata[b"huggingface"] == before.schema.metadata[b"huggingface"]
        assert json.loads(after.schema.metadata[b"huggingface"])["info"]["features"][
            "image"] == {"_type": "Image"}
        old, new = pq.ParquetFile(source).metadata, pq.ParquetFile(target).metadata
        assert [new.row_group(g).num_rows for g in range(new.num_row_groups)] == \
            [old.row_group(g).num_rows for g in range(old.num_row_groups)]
        assert new.row_group(0).column(0).compression == old.row_group(0).column(0).compression
        assert [r.values for r in parquet.iter_rows([target], before.column_names)] == \
            before.to_pylist()
    # 100 KB images: a page closes at the first 3-row boundary past 1 MiB (12 images), and
    # no dictionary page gathers them; 600 KB images: 3 a page
    pages = _image_pages(out / "P3" / "shard_00000.parquet")
    assert [[h.num_values for h in group] for group in pages] == [[12] * 4, [12]]
    assert all(h.kind != pagestream.DICTIONARY_PAGE for group in pages for h in group)
    assert [[h.num_values for h in group]
            for group in _image_pages(out / "P3_box_img" / "shard_00000.parquet")] == [[3, 3]]
    inspected = invoke("data", "inspect", out)
    assert "Streamed: 1 of 30 column chunks" in inspected.stdout  # the 600 KB images


def test_repage_keeps_codecs_and_other_column_types(tmp_path):
    rnd = random.Random(4)
    table = pa.table({
        "image": pa.array([None if i == 3 else rnd.randbytes(BIG) for i in range(9)],
                          pa.binary()),
        "score": pa.array([i / 3 for i in range(9)], pa.float64()),
        "labels": pa.array([[f"l{i}", None] if i % 2 else None for i in range(9)],
                           pa.list_(pa.string())),
        "when": pa.array(range(9), pa.timestamp("ns")),
    })
    source = tmp_path / "mixed.parquet"
    pq.write_table(table, source, compression="ZSTD")
    result = invoke("data", "repage", source, tmp_path / "out.parquet")
    assert result.exit_code == 0, result.output
    target = tmp_path / "out.parquet"
    assert pq.read_table(target).equals(pq.read_table(source))
    meta = pq.ParquetFile(target).metadata
    assert {meta.row_group(0).column(i).compression for i in range(meta.num_columns)} == \
        {"ZSTD"}
    # with --page-rows 1 a page closes at the first image past 1 MiB: two 600 KB images
    pages = _image_pages_flat(target)
    assert len(pages) >= 4 and sum(h.num_values for h in pages) == 9
    assert all(h.uncompressed_size < (1 << 20) + BIG + 100 for h in pages)


def _image_pages_flat(path: Path) -> list[pagestream.PageHeader]:
    handle = pq.ParquetFile(path)
    return list(pagestream.page_headers(path, *pagestream.chunk_span(handle.metadata, 0, 0)))


@pytest.mark.parametrize("existing", ["file", "folder with a file"])
def test_repage_refuses_to_write_over_data(tmp_path, existing):
    root = _dataset(tmp_path / "salbench")
    source = root / "P3" / "shard_00000.parquet"
    if existing == "file":
        target = tmp_path / "taken.parquet"
        target.write_bytes(b"keep me")
        result = invoke("data", "repage", source, target)
    else:
        target = tmp_path / "taken"
        target.mkdir()
        (target / "notes.txt").write_text("keep me")
        result = invoke("data", "repage", root, target)
    assert result.exit_code == 2
    assert "already exists" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert (target if existing == "file" else target / "notes.txt").read_bytes() in \
        (b"keep me",)
    # the input itself as OUT is refused the same way
    assert invoke("data", "repage", source, source).exit_code == 2
    assert pq.read_table(source).num_rows == 60
