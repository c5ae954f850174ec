"""Where NaturalBench's parquet files come from: a local copy (--data-dir) or the Hub.

The dataset repository keeps its one split as `data/train-0000N-of-0000M.parquet` files;
a `--data-dir` may be the repository root or its `data/` folder (any `train-*.parquet`
below it, else every parquet file below it). The Hub copy is fetched with huggingface_hub
at the pinned revision (spec.HF_REVISION), then read exactly like a local one, so images
stay the stored bytes."""

from __future__ import annotations

from pathlib import Path

from visioneval.benchmarks.naturalbench.spec import HF_REPO, HF_REVISION
from visioneval.io.parquet import DataError, hub_snapshot

PATTERN = "train-*.parquet"


def locate(data_dir: Path | None) -> tuple[Path, list[Path]]:
    """(dataset root, its parquet files in name order)."""
    root = data_dir if data_dir is not None else hub_snapshot(
        HF_REPO, [f"data/{PATTERN}"], revision=HF_REVISION)
    if not root.is_dir():
        raise DataError(f"--data-dir {root}: no such folder")
    files = sorted(p for p in root.rglob(PATTERN) if p.is_file()) or \
        sorted(p for p in root.rglob("*.parquet") if p.is_file())
    if not files:
        raise DataError(f"{root} has no parquet file (expected the {HF_REPO} repository's "
                        f"data/{PATTERN})")
    return root, files
