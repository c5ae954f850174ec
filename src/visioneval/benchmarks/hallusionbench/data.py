"""Where HallusionBench's parquet files come from: a local copy (--data-dir) or the Hub.

The Hub repository ([HF] lmms-lab/HallusionBench) stores each split as `data/<split>-*.parquet`
(`image-00000-of-00001.parquet`, `non_image-00000-of-00001.parquet`); they are found in any
subfolder, so `--data-dir` may be the repository root or its `data/` folder. The Hub copy is
downloaded with huggingface_hub at the pinned commit, only the splits the run asks, and read
exactly like a local one, so the images stay the stored bytes."""

from __future__ import annotations

from pathlib import Path

from visioneval.benchmarks.hallusionbench.spec import HF_REPO, HF_REVISION
from visioneval.io.parquet import DataError, hub_snapshot


def locate(data_dir: Path | None, splits: list[str]) -> tuple[Path, dict[str, list[Path]]]:
    """(dataset root, the parquet files of each split in name order)."""
    root = data_dir if data_dir is not None else hub_download(splits)
    if not root.is_dir():
        raise DataError(f"--data-dir {root}: no such folder")
    files = {s: split_files(root, s) for s in splits}
    missing = [s for s, found in files.items() if not found]
    if missing:
        why = (" (without it, ask only the questions that have a figure: --protocol "
               "lmms-eval or vlmevalkit)" if missing == ["non_image"] else "")
        raise DataError(f"{root} has no {', '.join(f'{s}-*.parquet' for s in missing)} "
                        f"file (expected the {HF_REPO} repository's parquet files){why}")
    return root, files


def split_files(root: Path, split: str) -> list[Path]:
    # "image-*" never matches "non_image-...": the name starts with the split.
    return sorted(p for p in root.rglob(f"{split}-*.parquet") if p.is_file())


def hub_download(splits: list[str]) -> Path:
    return hub_snapshot(HF_REPO, [f"data/{s}-*.parquet" for s in splits],
                        revision=HF_REVISION)
