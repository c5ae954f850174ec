"""What a parquet file's column chunks look like: how many pages each has, the largest one's
size as stored and decompressed, and which reader `iter_rows` uses for it (what `visioneval
data inspect` prints). Only page headers are read, never a page."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from visioneval.io import pagestream, parquet


@dataclass(frozen=True)
class Chunk:
    """One leaf column's chunk in one row group. `compressed` and `uncompressed` are the
    largest page's body (a dictionary page counts), which may be two different pages;
    `problem` says why its headers could not be read (then the sizes are 0)."""

    group: int
    column: str  # the leaf's dotted path: "image.bytes"
    rows: int
    codec: str
    pages: int
    compressed: int
    uncompressed: int
    reader: str  # "pyarrow", "streamed", or "pyarrow: REASON" for a chunk not streamable
    problem: str = ""


@dataclass(frozen=True)
class FileChunks:
    path: Path
    rows: int
    groups: int
    size: int  # bytes on disk
    chunks: tuple[Chunk, ...]


def file_chunks(path: Path, streaming: parquet.Streaming = parquet.STREAMING) -> FileChunks:
    """Every column chunk of a file, row group by row group, leaves in schema order."""
    handle = parquet._open_stream(path)
    meta = handle.metadata
    chunks = []
    for group in range(meta.num_row_groups):
        streamed = parquet.streamed_leaves(path, handle, group, streaming)
        for leaf in range(meta.num_columns):
            column = meta.row_group(group).column(leaf)
            pages = compressed = uncompressed = 0
            problem = ""
            try:
                for header in pagestream.page_headers(
                        path, *pagestream.chunk_span(meta, group, leaf)):
                    pages += 1
                    compressed = max(compressed, header.compressed_size)
                    uncompressed = max(uncompressed, header.uncompressed_size)
            except pagestream.PageError as exc:
                problem = str(exc)
            chunks.append(Chunk(group, column.path_in_schema, meta.row_group(group).num_rows,
                                column.compression, pages, compressed, uncompressed,
                                _reader(path, handle, group, leaf, leaf in streamed),
                                problem))
    return FileChunks(path, meta.num_rows, meta.num_row_groups, path.stat().st_size,
                      tuple(chunks))


STREAMED_ENCODINGS = {"PLAIN", "PLAIN_DICTIONARY", "RLE", "RLE_DICTIONARY", "BIT_PACKED"}


def _reader(path: Path, handle, group: int, leaf: int, streamed: bool) -> str:
    """What reads a chunk: pyarrow, or the streamer unless the chunk's codec or encodings
    are ones it hands to pyarrow (`pagestream.Unsupported`)."""
    if not streamed:
        return "pyarrow"
    column = handle.schema.column(leaf)
    try:
        pagestream.leaf_chunk(path, handle.metadata, group, leaf, column.max_definition_level,
                              column.max_repetition_level)
    except pagestream.Unsupported as exc:
        return f"pyarrow: {str(exc).removesuffix(' compression')}"
    other = sorted(set(handle.metadata.row_group(group).column(leaf).encodings)
                   - STREAMED_ENCODINGS)
    if not other:
        return "streamed"
    return "pyarrow: delta encoding" if other[0].startswith("DELTA") else \
        f"pyarrow: {other[0].lower().replace('_', ' ')}"
