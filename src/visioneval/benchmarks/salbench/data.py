"""Where SalBench's parquet files come from: a local copy (--data-dir) or the HF Hub.

Both paths end in the same folder shape, `<root>/<config>/*.parquet`, read by
`visioneval.benchmarks.parquet`; the Hub copy is fetched with huggingface_hub (what
`datasets` itself uses) so images stay the stored bytes and nothing is converted."""

from __future__ import annotations

from pathlib import Path

from visioneval.benchmarks.parquet import DataError, hub_snapshot
from visioneval.benchmarks.salbench.spec import HF_REPO


def locate(data_dir: Path | None, configs: list[str]) -> Path:
    """The dataset root holding one folder per config."""
    root = data_dir if data_dir is not None else hub_download(configs)
    if not root.is_dir():
        raise DataError(f"--data-dir {root}: no such folder")
    missing = [c for c in configs if not (root / c).is_dir()]
    if missing:
        raise DataError(f"{root} has no folder {', '.join(missing)} (expected "
                        f"{root}/<config>/*.parquet, as in the {HF_REPO} repository)")
    return root


def hub_download(configs: list[str]) -> Path:
    return hub_snapshot(HF_REPO, [f"{c}/*.parquet" for c in configs])
