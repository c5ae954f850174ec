"""Where BLINK's rows come from: BLINK-Benchmark/BLINK on the Hugging Face Hub, one config
per task, each one parquet file per split (`<Task>/val-00000-of-00001.parquet`), or a local
copy in that layout (`--data-dir`, found in any subfolder). Images are the stored bytes of
`image_1` ... `image_4` (null when a question uses fewer)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from visioneval.benchmarks.blink.spec import COLUMNS, HF_REPO, IMAGE_COLUMNS, SPLIT
from visioneval.core.rows import cell_image
from visioneval.io import parquet
from visioneval.io.images import Image
from visioneval.io.parquet import DataError, hub_revision, hub_snapshot


@dataclass(frozen=True)
class Row:
    task: str
    where: str
    values: dict[str, Any]

    def images(self) -> list[Image]:
        """Every non-null image of the row, in column order (Skip if one is unreadable)."""
        return [cell_image(self.values[c], c) for c in IMAGE_COLUMNS
                if self.values.get(c) is not None]


@dataclass(frozen=True)
class BlinkData:
    root: Path
    files: dict[str, list[Path]]  # task -> its parquet files
    source: str

    @property
    def revision(self) -> str | None:
        return hub_revision(self.root)

    def all_files(self) -> list[Path]:
        return [f for files in self.files.values() for f in files]

    def dataset(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "source": self.source, "split": SPLIT,
            "fingerprint": parquet.fingerprint(self.all_files(), self.root),
            "stat": parquet.file_stat(self.all_files(), self.root),
            "files": {t: [f.relative_to(self.root).as_posix() for f in files]
                      for t, files in self.files.items()},
            "rows": self.counts()}
        if self.revision:
            out["revision"] = self.revision
        return out

    def counts(self) -> dict[str, int]:
        return {t: parquet.row_count(files) for t, files in self.files.items()}

    def rows(self, limit: int | None = None) -> Iterator[Row]:
        for task, files in self.files.items():
            for row in parquet.iter_rows(files, COLUMNS, limit=limit):
                yield Row(task, f"{task}/{row.file.name} row {row.index}", row.values)


def task_files(root: Path, task: str) -> list[Path]:
    return sorted(p for p in root.rglob(f"{SPLIT}-*.parquet")
                  if p.is_file() and p.parent.name == task)


def locate(data_dir: Path | None, tasks: list[str]) -> BlinkData:
    """The val files of `tasks`, from `data_dir` or the Hub; DataError naming what is
    missing."""
    if data_dir is None:
        root = hub_snapshot(HF_REPO, [f"{t}/{SPLIT}-*.parquet" for t in tasks])
        revision = hub_revision(root)
        source = f"hf://{HF_REPO}" + (f"@{revision}" if revision else "")
    else:
        root, source = data_dir, str(data_dir)
        if not root.is_dir():
            raise DataError(f"--data-dir {root}: no such folder")
    files = {t: task_files(root, t) for t in tasks}
    missing = [t for t, found in files.items() if not found]
    if missing:
        raise DataError(f"{root}: no {', '.join(f'{t}/{SPLIT}-*.parquet' for t in missing)} "
                        f"({HF_REPO}'s layout: one folder per task); choose tasks with "
                        "--tasks")
    for path in (f for found in files.values() for f in found):
        absent = parquet.missing_columns(path, COLUMNS)
        if absent:
            raise DataError(f"{path}: no column {', '.join(absent)} ({HF_REPO} has "
                            f"{', '.join(COLUMNS)})")
    return BlinkData(root, files, source)
