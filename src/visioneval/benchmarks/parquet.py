"""Reading benchmark parquet files lazily and fingerprinting them (shared by benchmarks).

Rows are read a few at a time (never a whole row group), so memory stays flat however
large the split and whatever its row-group size;
image columns may be HF `Image` structs ({"bytes", "path"}) or plain binary.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

READ_ROWS = 8  # rows decoded at a time: 8 images of 1.3 MB are 10 MB
READ_BUFFER = 1 << 20  # bytes read from the file at a time


class DataError(Exception):
    """A dataset file or folder cannot be used; the message names it."""


@dataclass(frozen=True)
class Row:
    """One row with its position: `index` counts rows across the config's files."""

    index: int
    file: Path
    values: dict[str, Any]


def parquet_files(folder: Path) -> list[Path]:
    files = sorted(p for p in folder.rglob("*.parquet") if p.is_file())
    if not files:
        raise DataError(f"no parquet files under {folder}")
    return files


def row_count(files: Sequence[Path]) -> int:
    return sum(_open(f).metadata.num_rows for f in files)


def _open(path: Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError ...
        raise DataError(f"{path}: not a readable parquet file ({exc})") from None


def missing_columns(path: Path, columns: Iterable[str]) -> list[str]:
    names = set(_open(path).schema_arrow.names)
    return [c for c in columns if c not in names]


def iter_rows(files: Sequence[Path], columns: Sequence[str], limit: int | None = None,
              wanted: set[int] | None = None) -> Iterator[Row]:
    """Rows in file order, `columns` only; stop after `limit` rows; with `wanted`, only
    those row indices (row groups without any are not read). Rows are decoded READ_ROWS at
    a time from a buffered stream, never a whole row group at once (see `_row_slices`)."""
    index = 0
    for path in files:
        handle = _open_stream(path)
        present = [c for c in columns if c in handle.schema_arrow.names]
        for group in range(handle.metadata.num_row_groups):
            n = handle.metadata.row_group(group).num_rows
            if limit is not None and index >= limit:
                return
            if wanted is not None and not any(index <= w < index + n for w in wanted):
                index += n
                continue
            for values in _row_slices(handle, group, present):
                if limit is not None and index >= limit:
                    return
                if wanted is None or index in wanted:
                    yield Row(index, path, values)
                index += 1


def _open_stream(path: Path) -> pq.ParquetFile:
    """A file opened for reading in slices: column data comes through a READ_BUFFER-byte
    buffered stream (no pre-buffering of whole column chunks)."""
    try:
        return pq.ParquetFile(path, buffer_size=READ_BUFFER, pre_buffer=False)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError ...
        raise DataError(f"{path}: not a readable parquet file ({exc})") from None


def _row_slices(handle: pq.ParquetFile, group: int, columns: list[str]
                ) -> Iterator[dict[str, Any]]:
    """One row group's rows, decoded READ_ROWS at a time. Memory holds a slice of rows and
    the data page being read: a file written with one page per image (or per few) streams
    whatever its row-group size; one whose whole row group is a single page (pyarrow's
    default writer puts up to 1024 rows in a page) costs that page, a floor no reader
    avoids (docs/PERFORMANCE.md, "Big images and row groups")."""
    for batch in handle.iter_batches(batch_size=READ_ROWS, row_groups=[group],
                                     columns=columns, use_threads=False):
        yield from batch.to_pylist()


def image_bytes(value: Any) -> bytes:
    """The encoded bytes of an image cell (HF Image struct or raw binary)."""
    if isinstance(value, dict):
        data = value.get("bytes")
        if data is None:
            path = value.get("path")
            raise ValueError(f"image has no bytes{f' (only a path: {path})' if path else ''}")
        return data
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    raise ValueError(f"image cell is {type(value).__name__}, not bytes or an HF Image struct")


def fingerprint(files: Sequence[Path], root: Path) -> str:
    """sha256 over each file's relative path and content: equal data, equal fingerprint."""
    outer = hashlib.sha256()
    for path in files:
        inner = hashlib.sha256()
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                inner.update(chunk)
        outer.update(f"{path.relative_to(root).as_posix()}\0{inner.hexdigest()}\n".encode())
    return outer.hexdigest()


def write_hf_parquet(path: Path, rows: Sequence[dict[str, Any]], image_columns: Sequence[str],
                     row_group: int = 64, page_rows: int = 8) -> None:
    """Write rows as the Hugging Face Hub stores them: image columns as {"bytes", "path"}
    structs, the rest as strings, with the `huggingface` schema metadata that lets
    `datasets` read the images back as Image features. Used for fixtures and synthetic sets.
    A data page holds at most `page_rows` rows (pyarrow's default is 1024, a whole row group
    of images in one page, which a reader must hold at once)."""
    import json

    import pyarrow as pa

    columns = list(rows[0]) if rows else list(image_columns)
    image_type = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    fields = [pa.field(c, image_type if c in image_columns else pa.string()) for c in columns]
    features = {c: {"_type": "Image"} if c in image_columns else
                {"dtype": "string", "_type": "Value"} for c in columns}
    schema = pa.schema(fields, metadata={b"huggingface": json.dumps(
        {"info": {"features": features}}).encode()})
    table = pa.Table.from_pylist(list(rows), schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=row_group, write_batch_size=page_rows)


def dataset_plan(name: str, options: Any, root: Path, files: dict[str, list[Path]],
                 source: str) -> dict[str, Any]:
    """What run.json records about a parquet benchmark: its options, where the data came
    from, the files per group, their row counts and the fingerprint of their content."""
    every = [f for group in files.values() for f in group]
    return {
        "benchmark": name,
        "options": options.model_dump(),
        "dataset": {
            "source": source,
            "fingerprint": fingerprint(every, root),
            "files": {g: [f.relative_to(root).as_posix() for f in fs] for g, fs in files.items()},
            "rows": {g: row_count(fs) for g, fs in files.items()},
        },
    }


def hub_snapshot(repo: str, patterns: list[str]) -> Path:
    """Download (or find in the HF cache) the files of a Hub dataset repository matching
    `patterns`; any failure is one DataError telling the user about --data-dir."""
    from huggingface_hub import snapshot_download  # lazy: only when no --data-dir

    try:
        return Path(snapshot_download(repo, repo_type="dataset", allow_patterns=patterns))
    except Exception as exc:  # offline, gated, renamed ...
        first_line = str(exc).splitlines()[0] if str(exc) else ""
        raise DataError(f"cannot download {repo} from the Hugging Face Hub "
                        f"({exc.__class__.__name__}: {first_line}); "
                        "pass --data-dir with a local copy") from None
