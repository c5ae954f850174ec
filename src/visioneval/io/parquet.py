"""Reading benchmark parquet files lazily and fingerprinting them (shared by benchmarks).

Rows are read a few at a time (never a whole row group, never a whole data page of
images), so memory stays flat however large the split and whatever its row-group and page
sizes; image columns may be HF `Image` structs ({"bytes", "path"}) or plain binary.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from visioneval.io import pagestream
from visioneval.io.dataerror import DataError

READ_ROWS = 8  # rows decoded at a time: 8 images of 1.3 MB are 10 MB
READ_BUFFER = 1 << 20  # bytes read from the file at a time


@dataclass(frozen=True)
class Streaming:
    """When `iter_rows` streams a binary column chunk (an image column) instead of leaving
    it to pyarrow, which holds a page whole (compressed and decompressed) but decodes small
    values at less CPU per row. Streamed: a chunk with a page over `pages_over` bytes; one
    whose values average `values_from` bytes or more (the streamer copies each value once,
    pyarrow more often: less CPU and memory from ~128 KB on); one over `pages_over` in
    pages averaging under `tiny_pages` (pyarrow's buffered reads keep 20-40 KB for each
    page under 16 KiB until the chunk ends). Figures: docs/PERFORMANCE.md, "Which reader
    for which page size"."""

    pages_over: int = 4 << 20
    values_from: int = 128 << 10
    tiny_pages: int = 16 << 10


STREAMING = Streaming()  # what iter_rows does by default
ALWAYS = Streaming(pages_over=0, values_from=0)  # every binary column chunk streamed
NEVER = Streaming(pages_over=1 << 62, values_from=1 << 62, tiny_pages=0)  # pyarrow only


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


def files_missing_columns(files: Sequence[Path], columns: Iterable[str], limit: int | None
                          ) -> Iterator[tuple[Path, list[str], int]]:
    """(file, its missing columns, how many of its rows a run would read: at most `limit`)
    for each file that lacks any of `columns`: every one of its rows is then skipped."""
    for path in files:
        missing = missing_columns(path, columns)
        if missing:
            rows = row_count([path])
            yield path, missing, rows if limit is None else min(rows, limit)


def iter_rows(files: Sequence[Path], columns: Sequence[str], limit: int | None = None,
              wanted: set[int] | None = None, streaming: Streaming = STREAMING
              ) -> Iterator[Row]:
    """Rows in file order, `columns` only; stop after `limit` rows; with `wanted`, only
    those row indices (row groups without any are not read). Rows are decoded READ_ROWS at
    a time, and image columns value by value where `streaming` says so, never a whole row
    group or big data page of images at once (see `_row_slices`)."""
    index = 0
    for path in files:
        handle = _open_stream(path)
        present = list(dict.fromkeys(c for c in columns if c in handle.schema_arrow.names))
        streamed = _streamed_columns(handle, present)
        for group in range(handle.metadata.num_row_groups):
            n = handle.metadata.row_group(group).num_rows
            if limit is not None and index >= limit:
                return
            if wanted is not None and not any(index <= w < index + n for w in wanted):
                index += n
                continue
            here = _streamed_here(path, handle, group, streamed, streaming)
            for values in _row_slices(path, handle, group, present, here):
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


@dataclass(frozen=True)
class _Streamed:
    """A requested column whose binary values come from `pagestream`: a plain binary column
    (`order` empty) or a struct such as HF's Image, whose binary fields (`leaves`) are
    streamed and whose other fields (`siblings`) pyarrow reads; `order` is the struct's."""

    name: str
    leaves: dict[str, int]  # streamed field ("" for the column itself) -> parquet leaf index
    order: tuple[str, ...] = ()
    siblings: tuple[str, ...] = ()
    present_from: int = 0  # the struct is null below this definition level

    def value(self, leaves: dict[str, tuple[bool, bytes | None]], partial: Any) -> Any:
        """The column's value in a row, as pyarrow's `to_pylist()` gives it, from the
        streamed leaves' (struct present, value) and pyarrow's `partial` struct (the
        siblings' values, None for a null struct)."""
        if not self.order:
            return leaves[""][1]
        present = partial is not None if self.siblings else next(iter(leaves.values()))[0]
        if not present:
            return None
        return {f: leaves[f][1] if f in leaves else partial[f] for f in self.order}


def _streamed_columns(handle: pq.ParquetFile, columns: Sequence[str]) -> dict[str, _Streamed]:
    """Which requested columns stream their binary values. The rule: a top-level `binary`
    or `large_binary` column, or a top-level struct with such fields (HF's Image struct,
    {"bytes": binary, "path": string}), when no name involved has a dot in it (pyarrow
    reads the struct's other fields by their dotted path). Whether each column chunk can
    stream (codec, encodings, page kinds) is decided while reading it (`_leaf_values`)."""
    arrow = handle.schema_arrow
    leaf_index = {handle.schema.column(i).path: i for i in range(len(handle.schema))}
    out: dict[str, _Streamed] = {}
    for name in columns:
        if "." in name or len(arrow.get_all_field_indices(name)) != 1:
            continue
        field = arrow.field(name)
        if _is_binary(field.type) and name in leaf_index:
            out[name] = _Streamed(name, {"": leaf_index[name]})
        elif pa.types.is_struct(field.type):
            children = [field.type.field(i) for i in range(field.type.num_fields)]
            order = tuple(c.name for c in children)
            leaves = {c.name: leaf_index[f"{name}.{c.name}"] for c in children
                      if _is_binary(c.type) and f"{name}.{c.name}" in leaf_index}
            if leaves and not any("." in f for f in order) and len(set(order)) == len(order):
                out[name] = _Streamed(name, leaves, order,
                                      tuple(f for f in order if f not in leaves),
                                      1 if field.nullable else 0)
    return out


def _streamed_here(path: Path, handle: pq.ParquetFile, group: int,
                   streamed: dict[str, _Streamed], streaming: Streaming
                   ) -> dict[str, _Streamed]:
    """The `streamed` columns worth streaming in row group `group`: those with a binary
    leaf whose chunk `_worth_streaming`. The others are left to pyarrow, which holds a page
    at a time and decodes small pages at less CPU per row."""
    return {name: spec for name, spec in streamed.items()
            if any(_worth_streaming(path, handle, group, leaf, streaming)
                   for leaf in spec.leaves.values())}


def _worth_streaming(path: Path, handle: pq.ParquetFile, group: int, leaf: int,
                     streaming: Streaming) -> bool:
    """Whether a leaf's chunk is streamed (`Streaming`). Its values' average size and a
    chunk no bigger than `pages_over` need no look at its pages; a bigger one has its page
    headers read, up to the first page over `pages_over` or until its pages are known to be
    tiny (a header that cannot be read leaves the chunk to the streamer, which names it)."""
    column = handle.metadata.row_group(group).column(leaf)
    size = max(column.total_compressed_size, column.total_uncompressed_size)
    limit = streaming.pages_over
    if column.num_values and size >= column.num_values * streaming.values_from:
        return True
    if size <= limit:
        return False
    pages = 0
    try:
        for header in pagestream.page_headers(
                path, *pagestream.chunk_span(handle.metadata, group, leaf)):
            pages += 1
            if max(header.compressed_size, header.uncompressed_size) > limit or \
                    pages * streaming.tiny_pages > size:
                return True
    except pagestream.PageError:
        return True
    return False


def streamed_leaves(path: Path, handle: pq.ParquetFile, group: int,
                    streaming: Streaming = STREAMING) -> set[int]:
    """The parquet leaves whose values `iter_rows` streams in row group `group` when it
    reads every column (what `visioneval data inspect` shows); pyarrow reads the rest,
    and a chunk the streamer cannot read after all (`pagestream.Unsupported`) too."""
    streamed = _streamed_columns(handle, handle.schema_arrow.names)
    here = _streamed_here(path, handle, group, streamed, streaming)
    return {leaf for spec in here.values() for leaf in spec.leaves.values()}


def streamable(handle: pq.ParquetFile) -> dict[str, set[int]]:
    """The top-level columns whose binary values `iter_rows` streams when their pages are
    big (image columns), each with its binary leaves (parquet leaf indices)."""
    return {name: set(spec.leaves.values())
            for name, spec in _streamed_columns(handle, handle.schema_arrow.names).items()}


def _is_binary(kind: pa.DataType) -> bool:
    return pa.types.is_binary(kind) or pa.types.is_large_binary(kind)


def _row_slices(path: Path, handle: pq.ParquetFile, group: int, columns: list[str],
                streamed: dict[str, _Streamed]) -> Iterator[dict[str, Any]]:
    """One row group's rows, each equal to pyarrow's `to_pylist()` row. Small columns (and
    a struct's small fields) are decoded READ_ROWS at a time by pyarrow; the binary values
    of `streamed` columns come one at a time from `pagestream`. Memory holds a slice of
    rows, one image and a few MB of buffers, whatever the file's row-group and page sizes;
    pyarrow alone would hold a whole data page, and its writer puts up to 1024 rows in a
    page (docs/PERFORMANCE.md, "Big images and row groups")."""
    if not streamed:
        yield from _pyarrow_rows(path, handle, group, columns)
        return
    selection = [c for c in columns if c not in streamed]
    selection += [f"{c}.{f}" for c in columns if c in streamed for f in streamed[c].siblings]
    rows = handle.metadata.row_group(group).num_rows
    base = (_pyarrow_rows(path, handle, group, selection) if selection
            else itertools.repeat({}, rows))
    leaves = {name: {field: _leaf_values(path, handle, group, spec, field, leaf)
                     for field, leaf in spec.leaves.items()} for name, spec in streamed.items()}
    for _ in range(rows):
        small = _next(base, path, group)
        values: dict[str, Any] = {}
        for name in columns:
            spec = streamed.get(name)
            values[name] = small[name] if spec is None else spec.value(
                {field: _next(it, path, group) for field, it in leaves[name].items()},
                small.get(name))
        yield values


def _next(values: Iterator[Any], path: Path, group: int) -> Any:
    for value in values:
        return value
    raise DataError(f"{path}: row group {group}: a column holds fewer rows than the group")


def _leaf_values(path: Path, handle: pq.ParquetFile, group: int, spec: _Streamed,
                 field: str, leaf: int) -> Iterator[tuple[bool, bytes | None]]:
    """(the struct is present, the value) for each row of one streamed leaf. What
    `pagestream` cannot stream (another codec, a delta encoding, a far snappy copy ...) or
    finds corrupt is read by pyarrow from the row it stopped at: never a wrong value, and a
    file pyarrow cannot read either is one DataError naming the row group and column."""
    column = handle.schema.column(leaf)
    done = 0
    problem = ""
    try:
        chunk = pagestream.leaf_chunk(path, handle.metadata, group, leaf,
                                      column.max_definition_level,
                                      column.max_repetition_level)
        for level, value in pagestream.stream_values(chunk):
            yield level >= spec.present_from, value
            done += 1
        return
    except pagestream.Unsupported:
        pass
    except pagestream.PageError as exc:
        problem = str(exc)
    selection = f"{spec.name}.{field}" if field else spec.name
    fallback = _open_stream(path)
    try:
        for row in itertools.islice(_pyarrow_rows(path, fallback, group, [selection],
                                                  column.path), done, None):
            value = row[spec.name]
            if not field:
                yield True, value
            else:
                yield value is not None, None if value is None else value[field]
    except DataError:
        if not problem:
            raise
        raise DataError(f"{path}: row group {group}, column {column.path}: "
                        f"{problem}") from None


def _pyarrow_rows(path: Path, handle: pq.ParquetFile, group: int, columns: list[str],
                  what: str = "") -> Iterator[dict[str, Any]]:
    """One row group's rows of `columns` as pyarrow decodes them, READ_ROWS at a time; a
    file it cannot decode is one DataError naming the row group (and `what` column)."""
    try:
        for batch in handle.iter_batches(batch_size=READ_ROWS, row_groups=[group],
                                         columns=columns, use_threads=False):
            yield from batch.to_pylist()
    except (pa.ArrowException, OSError) as exc:
        where = f"row group {group}" + (f", column {what}" if what else "")
        first = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        raise DataError(f"{path}: {where}: {first}") from None


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


def file_stat(files: Sequence[Path], root: Path) -> dict[str, Any]:
    """Each file's size and modification time (ns), with the folder they are relative to:
    recorded beside the fingerprint, so a reader of the run can tell that the data is as it
    was from a stat per file (`report/datacheck.py`) instead of hashing it again."""
    stats = {}
    for path in files:
        st = path.stat()
        stats[path.relative_to(root).as_posix()] = [st.st_size, st.st_mtime_ns]
    return {"root": str(root.absolute()), "files": stats}


def write_hf_parquet(path: Path, rows: Sequence[dict[str, Any]], image_columns: Sequence[str],
                     row_group: int = 64, page_rows: int = 8) -> None:
    """Write rows as the Hugging Face Hub stores them: image columns as {"bytes", "path"}
    structs, the rest as strings, with the `huggingface` schema metadata that lets
    `datasets` read the images back as Image features. Used for fixtures and synthetic sets.
    A data page holds at most `page_rows` rows (pyarrow's default is 1024, a whole row group
    of images in one page, which a reader must hold at once)."""
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


def hub_snapshot(repo: str, patterns: list[str], revision: str | None = None) -> Path:
    """Download (or find in the HF cache) the files of a Hub dataset repository matching
    `patterns`, at `revision` (a commit sha pins the copy every number was scored on; None:
    the newest); any failure is one DataError telling the user about --data-dir. The folder
    returned is the snapshot's, named by the commit it holds (`hub_revision`)."""
    from huggingface_hub import snapshot_download  # lazy: only when no --data-dir

    try:
        return Path(snapshot_download(repo, repo_type="dataset", allow_patterns=patterns,
                                      revision=revision))
    except Exception as exc:  # offline, gated, renamed ...
        first_line = str(exc).splitlines()[0] if str(exc) else ""
        at = f" at revision {revision}" if revision else ""
        raise DataError(f"cannot download {repo}{at} from the Hugging Face Hub "
                        f"({exc.__class__.__name__}: {first_line}); "
                        "pass --data-dir with a local copy") from None


def hub_revision(snapshot: Path) -> str | None:
    """The commit a Hub snapshot folder holds (huggingface_hub names it
    `.../snapshots/<sha>`), for run.json; None for a folder of another shape."""
    name = snapshot.name
    if snapshot.parent.name == "snapshots" and len(name) == 40 and \
            all(c in "0123456789abcdef" for c in name):
        return name
    return None
