"""Where MMVP's questions and images come from, and how a row is read.

Two layouts are read:
- MMVP/MMVP on the Hugging Face Hub, the authors' copy ([P] README.md, "MMVP Bechmark"):
  `Questions.csv` (Index, Question, Options, Correct Answer) beside a folder `MMVP Images`
  holding `1.jpg` ... `300.jpg`. The image of a question is `<Index>.jpg`. (The paper's
  script takes the row's position + 1, scripts/evaluate_mllm.py line 73: the same file in
  the published CSV, whose Index counts its rows.)
- lmms-lab-eval/MMVP, lmms-eval's copy: parquet files with the same four columns and an
  `image` column (HF Image struct), four labels changed (`spec.LMMS_EVAL_CHANGES`).

`--data-dir` may hold either (found in any subfolder); without it MMVP/MMVP is downloaded
once. Images are sent as their stored bytes."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from visioneval.benchmarks.mmvp.options import Layout
from visioneval.benchmarks.mmvp.spec import (
    CSV_COLUMNS,
    HF_REPO,
    IMAGES_FOLDER,
    LMMS_EVAL_REPO,
    PARQUET_COLUMNS,
    QUESTIONS_FILE,
)
from visioneval.core.rows import Skip, cell_image
from visioneval.io import parquet
from visioneval.io.images import Image, ImageError, read_file
from visioneval.io.parquet import DataError, hub_revision, hub_snapshot

MAX_CSV_BYTES = 16 << 20  # the published file is about 30 kB


@dataclass(frozen=True)
class Row:
    """One data row: its position (0-based, in file order), where it is (for a skipped
    row's line), its four values and how to read its image."""

    position: int
    where: str
    values: dict[str, Any]
    image: Callable[[], Image]


@dataclass(frozen=True)
class MmvpData:
    layout: Layout
    root: Path
    files: list[Path]  # every file the rows come from (the CSV and the images, or parquet)
    source: str

    @property
    def revision(self) -> str | None:
        return hub_revision(self.root)

    def dataset(self) -> dict[str, Any]:
        """run.json's dataset block: source, layout, files, rows, fingerprint and stat."""
        out: dict[str, Any] = {
            "source": self.source, "layout": self.layout,
            "fingerprint": parquet.fingerprint(self.files, self.root),
            "stat": parquet.file_stat(self.files, self.root),
            "files": {"MMVP": [f.relative_to(self.root).as_posix() for f in self.files
                               if f.suffix in (".csv", ".parquet")]},
            "rows": {"MMVP": self.count()}}
        if self.revision:
            out["revision"] = self.revision
        return out

    def count(self) -> int:
        if self.layout == "MMVP/MMVP":
            return sum(1 for _ in _csv_records(self.files[0]))
        return parquet.row_count(self.files)

    def rows(self, limit: int | None = None) -> Iterator[Row]:
        if self.layout == "MMVP/MMVP":
            yield from self._csv_rows(limit)
        else:
            yield from self._parquet_rows(limit)

    def _csv_rows(self, limit: int | None) -> Iterator[Row]:
        path = self.files[0]
        folder = path.parent / IMAGES_FOLDER
        for position, (line, values) in enumerate(_csv_records(path)):
            if limit is not None and position >= limit:
                return
            yield Row(position, f"{path.name} line {line}", values,
                      _image_file(folder, values.get("Index")))

    def _parquet_rows(self, limit: int | None) -> Iterator[Row]:
        for row in parquet.iter_rows(self.files, PARQUET_COLUMNS, limit=limit):
            yield Row(row.index, f"{row.file.name} row {row.index}", row.values,
                      _image_cell(row.values.get("image")))


def _csv_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, values) of each row of Questions.csv."""
    if path.stat().st_size > MAX_CSV_BYTES:
        raise DataError(f"{path}: over {MAX_CSV_BYTES >> 20} MB, not MMVP's Questions.csv")
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(f"{path}: no column {', '.join(missing)} (MMVP's Questions.csv "
                            f"has {', '.join(CSV_COLUMNS)})")
        try:
            for values in reader:
                yield reader.line_num, {c: values.get(c) for c in CSV_COLUMNS}
        except csv.Error as exc:
            raise DataError(f"{path} line {reader.line_num}: {exc}") from None


def _image_cell(cell: Any) -> Callable[[], Image]:
    return lambda: cell_image(cell)


def _image_file(folder: Path, index: Any) -> Callable[[], Image]:
    def read() -> Image:
        name = f"{str(index).strip()}.jpg"
        try:
            return Image.from_bytes(read_file(folder / name, f"{IMAGES_FOLDER}/{name}"))
        except ImageError as exc:
            raise Skip(str(exc)) from None
    return read


def locate(data_dir: Path | None) -> MmvpData:
    """The data under `data_dir` (either layout), or MMVP/MMVP from the Hub."""
    if data_dir is None:
        root = hub_snapshot(HF_REPO, [QUESTIONS_FILE, f"{IMAGES_FOLDER}/*"])
        return _official(root, root / QUESTIONS_FILE, f"hf://{HF_REPO}")
    if not data_dir.is_dir():
        raise DataError(f"--data-dir {data_dir}: no such folder")
    found = sorted(p for p in data_dir.rglob(QUESTIONS_FILE) if p.is_file())
    if found:
        return _official(data_dir, found[0], str(data_dir))
    files = sorted(p for p in data_dir.rglob("*.parquet") if p.is_file())
    if files:
        for path in files:
            missing = parquet.missing_columns(path, PARQUET_COLUMNS)
            if missing:
                raise DataError(f"{path}: no column {', '.join(missing)} ({LMMS_EVAL_REPO} "
                                f"has {', '.join(PARQUET_COLUMNS)})")
        return MmvpData("lmms-lab-eval/MMVP", data_dir, files, str(data_dir))
    raise DataError(f"--data-dir {data_dir} holds neither {QUESTIONS_FILE} with an "
                    f"'{IMAGES_FOLDER}' folder ({HF_REPO}'s layout) nor parquet files "
                    f"({LMMS_EVAL_REPO}'s)")


def _official(root: Path, questions: Path, source: str) -> MmvpData:
    if not questions.is_file():
        raise DataError(f"{root}: no {QUESTIONS_FILE} ({HF_REPO}'s layout)")
    folder = questions.parent / IMAGES_FOLDER
    if not folder.is_dir():
        raise DataError(f"{questions.parent}: no '{IMAGES_FOLDER}' folder beside "
                        f"{QUESTIONS_FILE} ({HF_REPO}'s layout)")
    images = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix == ".jpg")
    return MmvpData("MMVP/MMVP", root, [questions, *images], source)
