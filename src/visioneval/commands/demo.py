"""`visioneval demo`'s data: the synthetic SalBench set, generated once and cached."""

from __future__ import annotations

import shutil
from pathlib import Path


def demo_data(cache_root: Path, n: int, seed: int) -> Path:
    """The demo's synthetic P3 set, generated once per (n, seed) and kept in the cache."""
    from visioneval.benchmarks.salbench.synth import GENERATOR_VERSION, write_synthetic

    target = cache_root / "demo" / f"salbench-synth-v{GENERATOR_VERSION}-n{n}-seed{seed}"
    if (target / "DONE").exists():
        return target
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    write_synthetic(tmp, n, seed)
    (tmp / "DONE").write_text("complete\n")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target
