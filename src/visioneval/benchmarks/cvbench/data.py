"""Where CV-Bench's parquet comes from: a local copy (--data-dir) or the Hub.

The Hub copy is `test.parquet` (config `default`, all 2,638 items) at the pinned revision
(spec.HF_REVISION), fetched with huggingface_hub and read like a local one, so images stay
the stored bytes. A `--data-dir` is a folder in the Hub's layout: its `test.parquet`, else
(a later revision's configs) `test_2d.parquet` and `test_3d.parquet`, else every parquet
file below it."""

from __future__ import annotations

from pathlib import Path

from visioneval.benchmarks.cvbench.spec import FILE, HF_REPO, HF_REVISION, SPLIT_FILES
from visioneval.io.parquet import DataError, hub_snapshot


def locate(data_dir: Path | None) -> tuple[Path, list[Path]]:
    """(dataset root, its parquet files in the order they are read)."""
    root = data_dir if data_dir is not None else hub_snapshot(
        HF_REPO, [FILE], revision=HF_REVISION)
    if not root.is_dir():
        raise DataError(f"--data-dir {root}: no such folder")
    whole = root / FILE
    if whole.is_file():
        return root, [whole]
    parts = [root / name for name in SPLIT_FILES if (root / name).is_file()]
    files = parts or sorted(p for p in root.rglob("*.parquet") if p.is_file())
    if not files:
        raise DataError(f"{root} has no parquet file (expected the {HF_REPO} repository's "
                        f"{FILE})")
    return root, files
