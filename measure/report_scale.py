"""Cost of `visioneval report` as a run grows: time, peak RSS and page size.

Synthetic finished runs of 1,000 / 10,000 / 130,000 records are written with the real
RunStore from a small synthetic dataset (`visioneval data synth-salbench` or
`synth-illusionbench`), then `python -m visioneval report RUN` is timed in its own
process; its peak RSS is that process's VmHWM. Also: the end-of-run report's settings
(`try_write_report`) on the 1,000-record run, and how long `visioneval view` takes to index
the biggest run.

    uv run python measure/report_scale.py                        # SalBench-shaped
    uv run python measure/report_scale.py --benchmark illusionbench
    uv run python measure/report_scale.py --sizes 1000,10000
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from visioneval.report.synthrun import write_run

OPTIONS = {"salbench": {"configs": ["P3", "P3_box", "P3_box_img"]},
           "illusionbench": {"protocol": "all"}}
PEAK = ("import re, sys, time; from pathlib import Path; t = time.perf_counter(); "
        "from visioneval.report import page; {call}; "
        "print(time.perf_counter() - t, "
        "re.search(r'VmHWM:\\s+(\\d+)', Path('/proc/self/status').read_text())[1])")


def timed(call: str, run: Path) -> tuple[float, float]:
    """Seconds (imports included) and peak RSS in MB of one call in a fresh process."""
    script = PEAK.format(call=call)
    out = subprocess.run([sys.executable, "-c", script, str(run)], check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", choices=list(OPTIONS), default="salbench")
    parser.add_argument("--sizes", default="1000,10000,130000")
    parser.add_argument("--rows", type=int, default=100, help="dataset rows per part")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "data"
        subprocess.run([sys.executable, "-m", "visioneval", "data",
                        f"synth-{args.benchmark}", "--out", str(data), "--n",
                        str(args.rows)], check=True, capture_output=True)
        print(f"{args.benchmark}, {args.rows} dataset rows per part")
        print("| records | journal | write run | report | peak RSS | page |")
        print("|---:|---:|---:|---:|---:|---:|")
        runs = []
        for n in (int(s) for s in args.sizes.split(",")):
            run = root / f"run{n}"
            started = time.perf_counter()
            write_run(run, args.benchmark, {**OPTIONS[args.benchmark], "data_dir": str(data)},
                      n)
            made = time.perf_counter() - started
            seconds, peak = timed("page.write_report(Path(sys.argv[1]))", run)
            size = (run / "report.html").stat().st_size / 1e6
            journal = (run / "samples.jsonl").stat().st_size / 1e6
            print(f"| {n:,} | {journal:.0f} MB | {made:.1f} s | {seconds:.1f} s | "
                  f"{peak:.0f} MB | {size:.1f} MB |", flush=True)
            runs.append(run)
        end, peak = timed("page.try_write_report(Path(sys.argv[1]))", runs[0])
        print(f"end-of-run report (try_write_report) on {runs[0].name}: {end:.2f} s, "
              f"{peak:.0f} MB")
        index, peak = timed("from visioneval.report.viewer import Viewer; "
                            "Viewer.open(Path(sys.argv[1]))", runs[-1])
        print(f"visioneval view, index of {runs[-1].name}: {index:.1f} s, {peak:.0f} MB")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import visioneval.report.charts"], check=True)
        print(f"(a bare `import visioneval.report.charts` process: "
              f"{time.perf_counter() - started:.2f} s)")


if __name__ == "__main__":
    main()
