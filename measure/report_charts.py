"""CPU and wall time of the end-of-run report (`try_write_report`) of a 1,000-record run,
and whether drawing it loaded matplotlib: the charts' share of the report's 1 s target.

Synthetic finished runs (SalBench-shaped with three configs, IllusionBench-shaped with every
protocol) are written with the real RunStore (`report.synthrun`); each report is then
written `--repeat` times, each in a fresh process that has already imported
`visioneval.report.page` (as a run has imported visioneval before its report), so the
figures are the report call alone: its process CPU time (user + system) and wall time.

    uv run python measure/report_charts.py
    uv run python measure/report_charts.py --repeat 7 --n 1000
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from report_scale import OPTIONS  # measure/: the same synthetic runs

from visioneval.report.synthrun import write_run

CALL = ("import sys, time; from pathlib import Path; from visioneval.report import page; "
        "c = time.process_time(); w = time.perf_counter(); "
        "page.try_write_report(Path(sys.argv[1])); "
        "print(time.process_time() - c, time.perf_counter() - w, 'matplotlib' in sys.modules)")


def once(run: Path) -> tuple[float, float, bool]:
    """CPU seconds, wall seconds, matplotlib loaded: one report in a fresh process."""
    out = subprocess.run([sys.executable, "-c", CALL, str(run)], check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1]), out[2] == "True"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="records per run")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print("| run | report CPU (median, min-max) | report wall (median) | matplotlib loaded |")
    print("|---|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for benchmark, options in OPTIONS.items():
            data = Path(tmp) / f"data-{benchmark}"
            subprocess.run([sys.executable, "-m", "visioneval", "data", f"synth-{benchmark}",
                            "--out", str(data), "--n", "100"], check=True, capture_output=True)
            run = write_run(Path(tmp) / f"run-{benchmark}", benchmark,
                            {**options, "data_dir": str(data)}, args.n)
            results = [once(run) for _ in range(args.repeat)]
            cpu = sorted(r[0] for r in results)
            wall = statistics.median(r[1] for r in results)
            print(f"| {benchmark}, {args.n:,} records | {statistics.median(cpu):.2f} s "
                  f"({cpu[0]:.2f}-{cpu[-1]:.2f}) | {wall:.2f} s | "
                  f"{'yes' if any(r[2] for r in results) else 'no'} |", flush=True)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
