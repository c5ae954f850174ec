"""What listing many runs costs (`visioneval runs`): one real builtin run (SalBench's three
synthetic configs, its journal included), copied N times into one folder; then the runs read
(run.json and metrics.json each, `report.runlist.entries`), the page rendered, the terminal
table drawn, and the whole command in a process of its own.

    uv run python measure/runs_index.py --runs 500,1000
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from visioneval.benchmarks.salbench.synth import write_synthetic
from visioneval.commands.runs import table
from visioneval.report.runlist import entries
from visioneval.report.runlist_page import render, report_link


def _made(root: Path) -> Path:
    data = root / "data"
    write_synthetic(data, 100, seed=0)
    run = root / "one"
    subprocess.run([sys.executable, "-m", "visioneval", "salbench", "--backend", "builtin",
                    "--model", "random", "--data-dir", str(data), "--configs",
                    "P3,P3_box,P3_box_img", "--out", str(run), "--no-progress"],
                   check=True, capture_output=True)
    return run


def _best(work, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", default="500,1000")
    sizes = [int(n) for n in parser.parse_args().runs.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        run = _made(Path(tmp))
        journal = (run / "samples.jsonl").stat().st_size
        print(f"one run: {journal / 1e3:.0f} kB journal, "
              f"{(run / 'metrics.json').stat().st_size / 1e3:.0f} kB metrics.json")
        folder = Path(tmp) / "results"
        made = 0
        print("| runs | read s | page s | page MB | table s | `visioneval runs` s |")
        print("|---:|---:|---:|---:|---:|---:|")
        for size in sizes:
            while made < size:
                made += 1
                shutil.copytree(run, folder / f"run-{made:05d}")
            found = entries(folder)
            assert len(found) == size
            read = _best(lambda: entries(folder))
            page = render(found, folder, report_link(folder))
            drawn = _best(lambda found=found: render(found, folder, report_link(folder)))
            shown = _best(lambda found=found: Console(file=io.StringIO(), width=100).print(
                table(found, 100)))
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "visioneval", "runs", str(folder)],
                           check=True, capture_output=True,
                           env={**os.environ, "COLUMNS": "100"})
            whole = time.perf_counter() - started
            print(f"| {size} | {read:.2f} | {drawn:.2f} | {len(page) / 1e6:.2f} | "
                  f"{shown:.2f} | {whole:.2f} |")


if __name__ == "__main__":
    main()
