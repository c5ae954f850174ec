"""Where SalBench's parquet files come from: a local copy (--data-dir) or the HF Hub.

Both paths end in the same folder shape, `<root>/<config>/*.parquet`, read by
`visioneval.io.parquet`; the Hub copy is fetched with huggingface_hub (what
`datasets` itself uses) so images stay the stored bytes and nothing is converted."""

from __future__ import annotations

from pathlib import Path

from visioneval.benchmarks.salbench.spec import CONFIGS, HF_REPO, SPLITS, ConfigSpec
from visioneval.io.parquet import DataError, hub_snapshot


class MissingConfigs(DataError):
    """The folder lacks some of the configs asked for; `present`: the configs it has."""

    def __init__(self, root: Path, missing: list[str], present: list[str]):
        super().__init__(f"{root} has no folder {', '.join(missing)} (expected "
                         f"{root}/<config>/*.parquet, as in the {HF_REPO} repository)")
        self.present = present

    def hint(self, wanted: list[ConfigSpec], named: bool) -> str | None:
        """What to add to the command to run what the folder holds: --splits when whole
        splits are there and the configs came from --splits/--tasks (`named`: they came
        from --configs), else --configs; None when it holds none of them."""
        usable = [c for c in wanted if c.name in self.present]
        if not usable:
            return None
        splits = [split for split, dataset in SPLITS.items()
                  if any(c.dataset == dataset for c in usable)]
        whole = all(c.name in self.present for c in wanted
                    if c.split_name in splits)
        flag = f"--splits {','.join(splits)}" if whole and not named else \
            f"--configs {','.join(c.name for c in usable)}"
        return f"it holds {', '.join(self.present)}: add {flag}"


def locate(data_dir: Path | None, configs: list[str]) -> Path:
    """The dataset root holding one folder per config."""
    root = data_dir if data_dir is not None else hub_download(configs)
    if not root.is_dir():
        raise DataError(f"--data-dir {root}: no such folder")
    missing = [c for c in configs if not (root / c).is_dir()]
    if missing:
        raise MissingConfigs(root, missing, [c for c in CONFIGS if (root / c).is_dir()])
    return root


def hub_download(configs: list[str]) -> Path:
    return hub_snapshot(HF_REPO, [f"{c}/*.parquet" for c in configs])
