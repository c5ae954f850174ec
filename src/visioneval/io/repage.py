"""Rewrite a parquet file with small pages, for readers that hold a whole page (pyarrow,
`datasets`, pandas): `visioneval data repage`.

pyarrow's writer, hence Hugging Face's, closes a page only between write batches of 1024
rows, so a row group of images is one page of hundreds of MB. Here the writer checks the
page size every `page_rows` rows (`write_batch_size`) and closes a page once it is over
PAGE_BYTES (`data_page_size`): an image page holds at most `page_rows` images (or about
PAGE_BYTES of small ones). Values, schema (with its `huggingface` metadata), row groups and
codecs stay as they were; image columns are written without a dictionary (a dictionary page
would gather the first images into one page again).

The input is read with `iter_rows` (image columns streamed out of big pages) and a row group
is written at a time, so memory holds about one row group, not twice a page."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from visioneval.io import parquet
from visioneval.io.parquet import DataError

PAGE_BYTES = 1 << 20  # pyarrow's own data_page_size
SLICE = 64  # image values turned into Arrow arrays at a time
_CODEC = {"UNCOMPRESSED": "none", "LZ4_RAW": "lz4", "LZ4": "lz4"}


@dataclass(frozen=True)
class Repaged:
    source: Path
    target: Path
    rows: int
    groups: int


def repage_file(source: Path, target: Path, page_rows: int) -> Repaged:
    """Write `source` again as `target` with pages of at most `page_rows` image values;
    `target` appears whole or not at all."""
    handle = parquet._open_stream(source)
    schema = handle.schema_arrow
    names = schema.names
    if len(set(names)) != len(names):
        raise DataError(f"{source}: two columns share a name; repage cannot tell them apart")
    meta = handle.metadata
    images = parquet.streamable(handle)
    image_leaves = {leaf for leaves in images.values() for leaf in leaves}
    leaves = [meta.schema.column(i).path for i in range(meta.num_columns)]
    codecs = {leaves[i]: _codec(meta.row_group(0).column(i).compression)
              for i in range(meta.num_columns)} if meta.num_row_groups else {}
    dictionary = [path for i, path in enumerate(leaves) if i not in image_leaves]
    rows = (row.values for row in parquet.iter_rows([source], list(images)))
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.repage-{os.getpid()}")
    try:
        with pq.ParquetWriter(partial, schema, compression=codecs or "snappy",
                              use_dictionary=dictionary, write_batch_size=page_rows,
                              data_page_size=PAGE_BYTES) as writer:
            for group in range(meta.num_row_groups):
                table = _group(handle, source, group, schema, images, rows)
                writer.write_table(table, row_group_size=max(1, table.num_rows))
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return Repaged(source, target, meta.num_rows, meta.num_row_groups)


def _codec(name: str) -> str:
    return _CODEC.get(name, name.lower())


def _group(handle: pq.ParquetFile, source: Path, group: int, schema: pa.Schema,
           images: dict[str, set[int]], rows: Iterator[dict[str, Any]]) -> pa.Table:
    """Row group `group` as a table: image columns from `rows` (SLICE values at a time),
    the others as pyarrow reads them (no round trip through Python)."""
    count = handle.metadata.row_group(group).num_rows
    others = [n for n in schema.names if n not in images]
    try:
        read = handle.read_row_group(group, columns=others, use_threads=False)
    except (pa.ArrowException, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        raise DataError(f"{source}: row group {group}: {first}") from None
    pieces: dict[str, list[pa.Array]] = {name: [] for name in images}
    left = count
    while left and images:
        batch = [parquet._next(rows, source, group) for _ in range(min(SLICE, left))]
        left -= len(batch)
        for name in images:
            pieces[name].append(pa.array([r[name] for r in batch], schema.field(name).type))
    columns = [pa.chunked_array(pieces[f.name], f.type) if f.name in images
               else read.column(f.name) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def parquet_targets(source: Path, target: Path) -> list[tuple[Path, Path]]:
    """(input file, output file) pairs: a file to a file, or every parquet file under a
    folder to the same relative path under `target`."""
    if source.is_file():
        return [(source, target)]
    if not source.is_dir():
        raise DataError(f"{source}: no such file or folder")
    return [(f, target / f.relative_to(source)) for f in parquet.parquet_files(source)]
