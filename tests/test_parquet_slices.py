"""Rows are read in slices of a row group: the same rows in the same order whatever the
file's row-group and page layout, `limit` and `wanted` across group boundaries, and a bad
row still one SkippedRow line."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from helpers import png_bytes

from visioneval.benchmarks.salbench.benchmark import SalBench, SalBenchOptions
from visioneval.core.records import Sample, SkippedRow
from visioneval.io import parquet

N = 23
COLUMNS = ("image", "question", "answer", "image_id")
# rows per row group, rows per data page at most (1024, pyarrow's default: a page per group)
LAYOUTS = [(1, 1024), (N, 1024), (5, 1024), (7, 3), (N, 1), (64, 8)]
# both readers: every image column streamed, and pyarrow for these small pages (the default)
READERS = [parquet.ALWAYS, parquet.STREAMING]


def _rows(bad: int | None = None) -> list[dict]:
    rows = []
    for i in range(N):
        image = b"not an image" if i == bad else png_bytes((i * 10 % 256, 40, 90), (8 + i, 6))
        rows.append({"image": {"bytes": image, "path": f"{i}.png"},
                     "question": f"Which feature? ({i})", "answer": "color",
                     "image_id": f"img-{i}"})
    return rows


def _write(tmp_path, rows, group, page_rows):
    path = tmp_path / "P3" / "shard_00000.parquet"
    parquet.write_hf_parquet(path, rows, ["image"], row_group=group, page_rows=page_rows)
    assert pq.ParquetFile(path).metadata.num_row_groups == -(-len(rows) // group)
    return path


@pytest.mark.parametrize("streaming", READERS)
@pytest.mark.parametrize(("group", "page_rows"), LAYOUTS)
def test_rows_come_out_identical_and_in_order(tmp_path, group, page_rows, streaming):
    rows = _rows()
    path = _write(tmp_path, rows, group, page_rows)
    got = list(parquet.iter_rows([path], COLUMNS, streaming=streaming))
    assert [r.index for r in got] == list(range(N))
    assert [r.values for r in got] == rows
    assert all(r.file == path for r in got)
    # two files: indices continue across them
    second = _write(tmp_path / "b", rows[:4], group, page_rows) if group <= 4 else path
    both = list(parquet.iter_rows([path, second], ("image_id",), streaming=streaming))
    assert [r.index for r in both] == list(range(len(both)))


@pytest.mark.parametrize("streaming", READERS)
@pytest.mark.parametrize(("group", "page_rows"), LAYOUTS)
def test_limit_wanted_and_missing_columns_across_groups(tmp_path, group, page_rows,
                                                        streaming):
    rows = _rows()
    path = _write(tmp_path, rows, group, page_rows)
    read = {"streaming": streaming}
    assert [r.index for r in parquet.iter_rows([path], COLUMNS, limit=9, **read)] == \
        list(range(9))
    assert list(parquet.iter_rows([path], COLUMNS, limit=0, **read)) == []
    wanted = {0, 4, 5, 6, 13, 22}
    picked = list(parquet.iter_rows([path], ("image", "image_id"), wanted=wanted, **read))
    assert [r.index for r in picked] == sorted(wanted)
    assert [r.values["image_id"] for r in picked] == [f"img-{i}" for i in sorted(wanted)]
    assert [r.values["image"] for r in picked] == [rows[i]["image"] for i in sorted(wanted)]
    assert list(picked[0].values) == ["image", "image_id"]
    # a column the file lacks is left out of the values, every row still counted
    odd = list(parquet.iter_rows([path], ("image_id", "nope"), **read))
    assert len(odd) == N and all(list(r.values) == ["image_id"] for r in odd)


@pytest.mark.parametrize(("group", "page_rows"), LAYOUTS)
def test_a_bad_row_is_one_skipped_line_and_the_rest_are_samples(tmp_path, group, page_rows):
    _write(tmp_path, _rows(bad=11), group, page_rows)
    items = list(SalBench(SalBenchOptions(configs=["P3"]), tmp_path).samples())
    skipped = [i for i in items if isinstance(i, SkippedRow)]
    assert len(skipped) == 1
    assert skipped[0].line().startswith("skipped P3 row image_id img-11: undecodable image")
    assert "\n" not in skipped[0].line()
    samples = [i for i in items if isinstance(i, Sample)]
    assert [s.id for s in samples] == [f"P3/img-{i}" for i in range(N) if i != 11]
    assert [s.metadata["row"] for s in samples] == [i for i in range(N) if i != 11]
