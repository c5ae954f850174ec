"""Whether the data a run read is still as it was, for `visioneval report` and `visioneval
view`: their thumbnails are read from the run's data as it is now and matched to the run's
images by sha256, so data rewritten since the run would show fewer pictures, or none,
without a word.

Cheap first: run.json's dataset block records each data file's size and modification time
(`parquet.file_stat`); when every file still has them, the data is the run's, for a stat per
file. Otherwise (a file was rewritten, moved or copied; or the run recorded no stat: an
older run, a VQA set whose images are files of their own, a benchmark of your own) the
dataset fingerprint is computed again as a resume computes it (the benchmark's `plan`,
which reads every data file) and compared with run.json's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from visioneval.core.runfiles import BenchmarkPlan

if TYPE_CHECKING:
    from visioneval.core.benchmark import BenchmarkDefinition
    from visioneval.core.runfiles import DatasetStat, RunInfo


def stat_holds(stat: DatasetStat | None) -> bool:
    """Whether every file run.json's `dataset.stat` names still has its size and time."""
    if stat is None or not stat.files:
        return False
    for name, recorded in stat.files.items():
        try:
            st = (Path(stat.root) / name).stat()
        except (OSError, ValueError):
            return False
        if [st.st_size, st.st_mtime_ns] != recorded:
            return False
    return True


def data_change(info: RunInfo, definition: BenchmarkDefinition) -> str | None:
    """One line when the run's data is not the data it read (its fingerprint differs), else
    None. `definition`: the run's trusted one, which reads the data. A re-scored run is not
    checked (its fingerprint covers the other tool's logs too, and its records carry no
    images), nor one whose data cannot be read now (the thumbnails' note says so)."""
    dataset = info.dataset
    if info.rescored_from is not None:
        return None
    before = dataset.fingerprint
    if before is None or stat_holds(dataset.stat):
        return None
    try:
        benchmark = definition.build_to_read(dict(info.options))
        now = BenchmarkPlan.of(benchmark.plan(), benchmark.name).dataset.fingerprint
    except Exception:  # moved, offline, not a benchmark that reads data: nothing to compare
        return None
    if now == before:
        return None
    source = dataset.source or "the run's data"
    return (f"thumbnails are from data that changed since the run: {source} (dataset "
            f"fingerprint {before[:12]} in run.json, {str(now)[:12]} now)")
