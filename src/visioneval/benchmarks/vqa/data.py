"""Where an image-question dataset comes from and how its rows are read.

A dataset is one parquet, JSONL or CSV file, a folder of them, or a Hugging Face Hub dataset
id (its parquet files, fetched with huggingface_hub as SalBench's are). Rows are streamed
(parquet a record batch at a time through `benchmarks.parquet`, JSONL a line at a time, CSV
a record at a time); images are read only when their sample is made, as the stored bytes.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from visioneval.io import parquet
from visioneval.io.images import Image, ImageError, outside, read_file
from visioneval.io.parquet import DataError

FORMATS = {".parquet": "parquet", ".jsonl": "jsonl", ".csv": "csv"}
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class Source:
    """The data files to read, the folder their names are relative to, and where they came
    from (what run.json records)."""

    root: Path
    files: tuple[Path, ...]
    origin: str


@dataclass(frozen=True)
class Row:
    """One row: `index` counts rows across the files, `number` is its row in its file
    (1-based; a JSONL file's line number), `problem` why it has no values (bad JSON)."""

    index: int
    file: Path
    number: int
    values: dict[str, Any]
    problem: str | None = None


def hub_id(data: str) -> str | None:
    """The Hub dataset id `data` names ("hf://owner/name" or "owner/name" that is no local
    path and has no data-file extension), or None."""
    if data.startswith("hf://"):
        return data.removeprefix("hf://").strip("/")
    if Path(data).exists() or Path(data).suffix.lower() in (*FORMATS, ".json"):
        return None
    return data if _HUB_ID.match(data) else None


def locate(data: str, split: str | None) -> Source:
    """The files of a local file or folder, or of a Hub dataset's parquet snapshot."""
    repo = hub_id(data)
    if repo is not None:
        root = _download(repo, split)
        return Source(root, tuple(_select(_data_files(root, f"hf://{repo}"), root, split,
                                          f"hf://{repo}")), f"hf://{repo}")
    path = Path(data)
    if not path.exists():
        raise DataError(f"--data {data}: no such file or folder (nor a Hub dataset id)")
    if path.is_file():
        if path.suffix.lower() not in FORMATS:
            raise DataError(f"--data {data}: not a .parquet, .jsonl or .csv file")
        return Source(path.parent, (path,), data)
    return Source(path, tuple(_select(_data_files(path, data), path, split, data)), data)


def _download(repo: str, split: str | None) -> Path:
    patterns = [f"*{split}*.parquet", f"{split}/*.parquet"] if split else ["*.parquet"]
    try:
        return parquet.hub_snapshot(repo, patterns)
    except DataError as exc:  # its advice names SalBench's option
        raise DataError(str(exc).replace("pass --data-dir with a local copy",
                                         "pass --data with a local file or folder")) from None


def _data_files(folder: Path, name: str) -> list[Path]:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in FORMATS
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    if not files:
        raise DataError(f"--data {name}: no .parquet, .jsonl or .csv file in it")
    return files


def in_split(path: Path, root: Path, split: str) -> bool:
    """A file belongs to a split when a folder on its path is named so, or its name is the
    split's or starts with it and a dash, underscore or dot (the Hub's
    `data/test-00000-of-00001.parquet`, `test/0000.parquet`, `test.jsonl`)."""
    relative = path.relative_to(root)
    if split in relative.parts[:-1]:
        return True
    return re.match(rf"^{re.escape(split)}(?:[-_.]|$)", relative.name) is not None


def _select(files: list[Path], root: Path, split: str | None, name: str) -> list[Path]:
    if split is None:
        return files
    chosen = [f for f in files if in_split(f, root, split)]
    if not chosen:
        shown = ", ".join(f.relative_to(root).as_posix() for f in files[:5])
        raise DataError(f"--data {name}: no file of split {split!r} (files: {shown}"
                        f"{' ...' if len(files) > 5 else ''})")
    return chosen


# -- columns and counts -----------------------------------------------------------------------

def missing_columns(path: Path, wanted: Sequence[str]) -> list[str]:
    """The wanted columns a file lacks: parquet's schema, CSV's header, the first JSONL
    object's keys (a later line without one is a bad row, not a missing column)."""
    kind = FORMATS[path.suffix.lower()]
    if kind == "parquet":
        return parquet.missing_columns(path, wanted)
    names: list[str] = []
    if kind == "csv":
        with _text(path) as fh:
            names = next(csv.reader(fh), [])
    for number, line in _lines(path) if kind == "jsonl" else ():
        try:
            first = json.loads(line)
        except ValueError:
            raise DataError(f"{path} line {number}: not a JSON object") from None
        names = list(first) if isinstance(first, dict) else []
        break
    return [c for c in wanted if c not in names]


def row_count(path: Path) -> int:
    kind = FORMATS[path.suffix.lower()]
    if kind == "parquet":
        return parquet.row_count([path])
    if kind == "csv":
        with _text(path) as fh:
            return max(0, sum(1 for _ in csv.reader(fh)) - 1)
    return sum(1 for _ in _lines(path))


def _text(path: Path):
    try:
        return open(path, encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-blank lines of a JSONL file."""
    with _text(path) as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                yield number, line


# -- rows --------------------------------------------------------------------------------------

def iter_rows(files: Sequence[Path], wanted: Sequence[str],
              limit: int | None = None) -> Iterator[Row]:
    """Rows in file order, stopping after `limit`. Parquet reads only the `wanted` columns;
    a JSONL line that is not a JSON object comes with a `problem` and no values, so the
    caller can skip it with one line."""
    index = 0
    for path in files:
        kind = FORMATS[path.suffix.lower()]
        for number, values, problem in _file_rows(path, kind, wanted):
            if limit is not None and index >= limit:
                return
            yield Row(index, path, number, values, problem)
            index += 1


def _file_rows(path: Path, kind: str, wanted: Sequence[str]
               ) -> Iterator[tuple[int, dict[str, Any], str | None]]:
    if kind == "parquet":
        for row in parquet.iter_rows([path], wanted):
            yield row.index + 1, row.values, None
    elif kind == "csv":
        with _text(path) as fh:
            for number, values in enumerate(csv.DictReader(fh), 1):
                yield number, dict(values), None
    else:
        for number, line in _lines(path):
            try:
                values = json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, {}, f"not JSON ({exc.msg})"
                continue
            if isinstance(values, dict):
                yield number, values, None
            else:
                yield number, {}, f"a JSON {type(values).__name__}, not an object"


# -- cells ---------------------------------------------------------------------------------------

def image_path(value: Any, base: Path) -> Path | None:
    """The file an image cell points at (a path string, or an HF struct with only a path),
    relative to the data file's folder; None for bytes."""
    if isinstance(value, dict) and value.get("bytes") is None and value.get("path"):
        value = value["path"]
    if isinstance(value, str):
        path = Path(value)
        return path if path.is_absolute() else base / path
    return None


def read_image(value: Any, base: Path, allow_outside: bool = False,
               real_base: Path | None = None) -> Image:
    """The image of a cell as its stored bytes (checked, never decoded). A path must lead
    inside the data file's folder `base` (symlinks resolved; `real_base` is
    `base.resolve()` if known) unless `allow_outside`: a downloaded dataset must not be able
    to send any file of the machine to a model. Raises ValueError (ImageError is one) with
    what is wrong."""
    if value is None or value == "":
        raise ValueError("is empty")
    path = image_path(value, base)
    if path is None:
        return Image.from_bytes(parquet.image_bytes(value))
    shown = value if isinstance(value, str) else str(path)
    if not allow_outside:
        target = outside(path, base, real_base)
        if target is not None:
            leads = "" if str(target) == shown else f" (it leads to {target})"
            raise ImageError(f"{shown} is outside the data file's folder {base}{leads}; pass "
                             "--allow-outside-images to read it")
    return Image.from_bytes(read_file(path, shown))


def choice_list(value: Any) -> list[str]:
    """Options from a list cell, or text holding a JSON or Python list. Raises ValueError."""
    if isinstance(value, str):
        text = value.strip()
        try:
            value = json.loads(text)
        except ValueError:
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                raise ValueError(f"{_short(text)!r} is not a JSON list") from None
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list):
        raise ValueError(f"is a {type(value).__name__}, not a list of options")
    return [str(v) for v in value]


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


# -- fingerprint -----------------------------------------------------------------------------------

def fingerprint(source: Source, image_col: str, allow_outside: bool = False) -> str:
    """The data files' fingerprint (`parquet.fingerprint`: relative paths and content),
    extended with the content of every image file the rows point at, so a changed image
    also changes it. Images stored in the files are covered by the files' own hash. A file
    the run would not read (outside the data file's folder without `allow_outside`, not a
    regular file, too big) is not read here either."""
    outer = hashlib.sha256(parquet.fingerprint(source.files, source.root).encode())
    for path in source.files:
        if not _paths_in(path, image_col):
            continue
        real = path.parent.resolve()
        for row in iter_rows([path], [image_col]):
            target = image_path(row.values.get(image_col), path.parent)
            if target is None:
                continue
            try:
                if not allow_outside and outside(target, path.parent, real) is not None:
                    digest = "outside"
                else:
                    digest = hashlib.sha256(read_file(target, target.name)).hexdigest()
            except ImageError:
                digest = "unreadable"
            outer.update(f"{row.index}\0{target.name}\0{digest}\n".encode())
    return outer.hexdigest()


def _paths_in(path: Path, image_col: str) -> bool:
    """Whether a file's image column can hold paths: always for JSONL and CSV; for parquet,
    a string column, or an HF Image struct whose `bytes` are null somewhere (read from the
    row groups' statistics, so a file of stored images is not read a second time)."""
    if FORMATS[path.suffix.lower()] != "parquet":
        return True
    handle = pq.ParquetFile(path)
    schema = handle.schema_arrow
    if image_col not in schema.names:
        return False
    kind = schema.field(image_col).type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return True
    if not pa.types.is_struct(kind):
        return False
    leaf = f"{image_col}.bytes"
    columns = [handle.schema.column(i).path for i in range(len(handle.schema))]
    if leaf not in columns:
        return True
    position = columns.index(leaf)
    for group in range(handle.metadata.num_row_groups):
        stats = handle.metadata.row_group(group).column(position).statistics
        if stats is None or not stats.has_null_count or stats.null_count:
            return True
    return False
