"""Where IllusionBench's parquet files come from: a local copy (--data-dir) or the HF Hub.

The dataset repository stores each split as `<split>-*.parquet` files (e.g.
`data/Illusion_ICON-00000-of-00004.parquet`); we look for them in any subfolder, so a
`--data-dir` may be the repository root or its `data/` folder. The Hub copy is fetched with
huggingface_hub limited to the chosen splits, then read exactly like a local one, so images
stay the stored bytes (as salbench/data.py does)."""

from __future__ import annotations

from pathlib import Path

from visioneval.benchmarks.illusionbench.spec import HF_REPO, SUBSETS, split_name
from visioneval.io.parquet import DataError, hub_snapshot


def locate(data_dir: Path | None, subsets: list[str]) -> tuple[Path, dict[str, list[Path]]]:
    """(dataset root, the parquet files of each subset in name order)."""
    root = data_dir if data_dir is not None else hub_download(subsets)
    if not root.is_dir():
        raise DataError(f"--data-dir {root}: no such folder")
    files = {s: split_files(root, s) for s in subsets}
    missing = [split_name(s) for s, found in files.items() if not found]
    if missing:
        usable = [s for s, found in files.items() if found]
        held = [s for s in SUBSETS if s in usable or split_files(root, s)]
        hint = f"; it holds {', '.join(held)}: add --subsets {','.join(usable)}" \
            if usable else ""
        raise DataError(f"{root} has no {', '.join(f'{m}-*.parquet' for m in missing)} "
                        f"file (expected the {HF_REPO} repository's parquet files){hint}")
    return root, files


def split_files(root: Path, subset: str) -> list[Path]:
    # "Illusion_IN-*" never matches "Illusion_ICON-...": the hyphen follows the split name.
    return sorted(p for p in root.rglob(f"{split_name(subset)}-*.parquet") if p.is_file())


def hub_download(subsets: list[str]) -> Path:
    # fnmatch's `*` also matches "/", so this finds the files in any folder.
    return hub_snapshot(HF_REPO, [f"*{split_name(s)}-*.parquet" for s in subsets])
