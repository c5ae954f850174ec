"""Where BlindTest's parquet files come from: a local copy (--data-dir, the Hub's layout
`data/valid-*.parquet`, found in any subfolder) or the Hugging Face Hub, downloaded once
with huggingface_hub; run.json records the commit downloaded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from visioneval.benchmarks.blindtest.spec import HF_REPO, REVISION, SPLIT
from visioneval.io import parquet
from visioneval.io.parquet import DataError, hub_revision, hub_snapshot


@dataclass(frozen=True)
class Located:
    root: Path
    files: list[Path]
    source: str


def locate(data_dir: Path | None) -> Located:
    """The `valid` files, from `data_dir` or the Hub; DataError naming what is missing."""
    if data_dir is None:
        root = hub_snapshot(HF_REPO, [f"*{SPLIT}-*.parquet"], revision=REVISION)
        revision = hub_revision(root)
        source = f"hf://{HF_REPO}" + (f"@{revision}" if revision else "")
    else:
        root, source = data_dir, str(data_dir)
    if not root.is_dir():
        raise DataError(f"--data-dir {root}: no such folder")
    files = sorted(p for p in root.rglob(f"{SPLIT}-*.parquet") if p.is_file())
    if not files:
        raise DataError(f"{root} has no {SPLIT}-*.parquet file (expected the {HF_REPO} "
                        f"repository's layout: data/{SPLIT}-00000-of-00001.parquet)")
    return Located(root, files, source)


def first_rows_per_task(files: list[Path], limit: int) -> set[int]:
    """The indices of each task's first `limit` rows (the `task` column read alone): the Hub
    file is ordered by task, so the first N rows would all be line plots."""
    seen: dict[str, int] = {}
    wanted: set[int] = set()
    for row in parquet.iter_rows(files, ("task",)):
        task = row.values.get("task")
        key = task.strip() if isinstance(task, str) else ""
        if seen.get(key, 0) < limit:
            seen[key] = seen.get(key, 0) + 1
            wanted.add(row.index)
    return wanted
