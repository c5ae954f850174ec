"""Dataset rows -> samples, the step every row-based benchmark shares.

A benchmark says how one row becomes its samples (`make`); this module reads the rows,
turns a row that cannot be used into a `SkippedRow` with one line saying why (`Skip`, raised
by `make` or by the row's own checks: `DataRow.text`, `DataRow.image`), reports a parquet file
that lacks a column once for all its rows, and keeps sample ids unique (a repeated id gets
`#<row index>`). Images are read as each sample is made, never ahead."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from visioneval.core.records import Sample, SkippedRow
from visioneval.io import parquet
from visioneval.io.images import Image, ImageError


class Skip(ValueError):
    """Why a row cannot be a sample, in one line (no row or file name: the caller adds it)."""


class Indexed(Protocol):
    @property
    def index(self) -> int:
        """The row's position across its group's files."""


Made = Sample | Sequence[Sample]
R = TypeVar("R", bound=Indexed)


def rename(sample: Sample, suffix: str) -> None:
    """A repeated id made unique: the suffix at its end."""
    sample.id += suffix


def to_samples(rows: Iterable[R], make: Callable[[R], Made], *,
               group: str | Callable[[R], str], where: Callable[[R], str], per_row: int = 1,
               unique: Callable[[Sample, str], None] = rename
               ) -> Iterator[Sample | SkippedRow]:
    """Each row's samples (`make`), or a SkippedRow naming the row (`where`) and why (the
    `Skip` it raised), standing for the `per_row` samples it would have made. An id seen
    before gets `#<row index>` (`unique` puts it in)."""
    seen: set[str] = set()
    for row in rows:
        try:
            made = make(row)
        except Skip as exc:
            name = group if isinstance(group, str) else group(row)
            yield SkippedRow(name, where(row), str(exc), per_row)
            continue
        items = [made] if isinstance(made, Sample) else made
        for item in items:
            if item.id in seen:
                unique(item, f"#{row.index}")
            seen.add(item.id)
            yield item


@dataclass(frozen=True)
class DataRow:
    """One parquet row as a benchmark's `make` reads it: its group (config, subset), its
    position across the group's files (`index`), its file and its values by column."""

    group: str
    index: int
    file: Path
    values: dict[str, Any]

    def __getitem__(self, column: str) -> Any:
        return self.values.get(column)

    def text(self, column: str) -> str:
        """The column's text; Skip when it is empty or not text."""
        value = self.values.get(column)
        if not isinstance(value, str) or not value.strip():
            raise Skip(f"column {column!r} is empty or not text")
        return value

    def image(self, column: str = "image") -> Image:
        """The column's image as its stored bytes (its header read, no pixel decoded);
        Skip when it is empty, holds no bytes or is no image."""
        return cell_image(self.values.get(column), column)


def cell_image(value: Any, column: str = "image") -> Image:
    """An image cell (HF Image struct or raw bytes) as an Image; Skip saying what is wrong."""
    if value is None:
        raise Skip(f"column {column!r} is empty")
    try:
        return Image.from_bytes(parquet.image_bytes(value))
    except ImageError as exc:
        raise Skip(f"undecodable image: {exc}") from None
    except ValueError as exc:  # no bytes, or a cell that is not an image
        raise Skip(str(exc)) from None


@dataclass(frozen=True)
class ParquetRows:
    """A parquet dataset read as rows: its files by group (one group for a plain folder),
    the folder their names are relative to, the columns a row needs (`optional`: read when a
    file has them), the rows a run reads of each group (`limit`: the first N) and where the
    data came from (run.json's `dataset.source`)."""

    root: Path
    files: Mapping[str, Sequence[Path]]
    columns: tuple[str, ...]
    optional: tuple[str, ...] = ()
    limit: int | None = None
    source: str = ""
    _counts: dict[str, int] = field(default_factory=dict, init=False, compare=False,
                                    repr=False)

    @classmethod
    def folder(cls, path: Path | str, columns: Sequence[str], *,
               optional: Sequence[str] = (), limit: int | None = None) -> ParquetRows:
        """Every parquet file under `path`, one group named after the folder; DataError
        when there is none."""
        root = Path(path)
        if not root.is_dir():
            raise parquet.DataError(f"{root}: no such folder")
        return cls(root, {root.name: parquet.parquet_files(root)}, tuple(columns),
                   tuple(optional), limit, str(root))

    def rows(self, group: str) -> int:
        """The group's rows in its files (all of them, whatever the limit)."""
        if group not in self._counts:
            self._counts[group] = parquet.row_count(self.files[group])
        return self._counts[group]

    def count(self, groups: Iterable[str] | None = None) -> int:
        """Rows a run reads: each group's (of `groups`, default all), at most `limit`."""
        limit = self.limit
        return sum(min(self.rows(g), limit) if limit is not None else self.rows(g)
                   for g in (self.files if groups is None else groups))

    def dataset(self) -> dict[str, Any]:
        """What run.json records about the data: where it came from, the files per group,
        their row counts, the fingerprint of their content and each file's stat."""
        every = [f for group in self.files.values() for f in group]
        return {
            "source": self.source,
            "fingerprint": parquet.fingerprint(every, self.root),
            "stat": parquet.file_stat(every, self.root),
            "files": {g: [f.relative_to(self.root).as_posix() for f in fs]
                      for g, fs in self.files.items()},
            "rows": {g: self.rows(g) for g in self.files},
        }

    def samples(self, make: Callable[[DataRow], Made], *, per_row: int = 1
                ) -> Iterator[Sample | SkippedRow]:
        """Every group's samples in file order (`group_samples`)."""
        for group in self.files:
            yield from self.group_samples(group, make, per_row=per_row)

    def group_samples(self, group: str, make: Callable[[DataRow], Made], *,
                      per_row: int = 1, wanted: set[int] | None = None,
                      where: Callable[[DataRow], str] | None = None,
                      unique: Callable[[Sample, str], None] = rename
                      ) -> Iterator[Sample | SkippedRow]:
        """One group's samples: a file lacking a needed column is one SkippedRow for all its
        rows; then each row through `to_samples`. `wanted`: only these row indices (instead
        of the first `limit`); `where` names a skipped row (default: its index)."""
        files = self.files[group]
        for path, missing, n in parquet.files_missing_columns(files, self.columns, self.limit):
            yield SkippedRow(group, f"{path.name} (every row)",
                             f"missing column(s) {', '.join(missing)}", n * per_row)
        limit = None if wanted is not None else self.limit
        rows = (DataRow(group, row.index, row.file, row.values)
                for row in parquet.iter_rows(files, (*self.columns, *self.optional),
                                             limit=limit, wanted=wanted)
                if all(c in row.values for c in self.columns))  # else reported above
        yield from to_samples(rows, make, group=group, per_row=per_row,
                              where=where or (lambda row: f"#{row.index}"), unique=unique)
