"""Speed of `visioneval layout` on a CANVAS-shaped directory made by code.

1000 GT/generated pairs (default) with ~80 boxes each and 1024x768 renders; every metric
but semantic match (which needs a captioner); `--workers 2` by default. The directory is
generated once into --data-dir (kept between runs) and the evaluation is timed as a user
runs it, through the command's own entry point: a fresh run directory, its journal, tables
and report.html (`--no-report`: without the page).

    uv run python measure/layout_speed.py                 # 1000 pairs, 2 workers
    uv run python measure/layout_speed.py --n 200 --workers 1
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

import typer

from visioneval.canvas.synth import write_random
from visioneval.cli import app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--boxes", type=int, default=80)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="Where the fixture lives (default: a temporary folder).")
    parser.add_argument("--viz", action="store_true", help="Also draw the pictures.")
    parser.add_argument("--no-report", action="store_true", help="No report.html.")
    args = parser.parse_args()

    temp = None
    base = args.data_dir
    if base is None:
        temp = tempfile.mkdtemp(prefix="layout-speed-")
        base = Path(temp)
    marker = base / f".made-{args.n}-{args.boxes}"
    if not marker.exists():
        t = time.perf_counter()
        shutil.rmtree(base / "results", ignore_errors=True)
        shutil.rmtree(base / "benchmarks", ignore_errors=True)
        write_random(base, args.n, boxes=args.boxes, seed=1)
        marker.touch()
        print(f"made {args.n} pairs in {time.perf_counter() - t:.1f} s under {base}")
    out = base / "speed-out"
    shutil.rmtree(out, ignore_errors=True)  # a run directory holds one run
    command = ["layout", "--base-dir", str(base), "--model", "gpt-4o", "--variant",
               "image_only", "--out", str(out), "--skip-semantic", "--workers",
               str(args.workers), "--no-progress", *(["--viz"] if args.viz else []),
               *(["--no-report"] if args.no_report else [])]
    t = time.perf_counter()
    code = typer.main.get_command(app).main(command, standalone_mode=False)
    wall = time.perf_counter() - t
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = resource.getrusage(resource.RUSAGE_SELF)
    main = own.ru_utime + own.ru_stime
    cpu = usage.ru_utime + usage.ru_stime + main
    print(f"exit {code}: {args.n} pairs, {args.workers} worker(s): {wall:.1f} s wall, "
          f"{args.n / wall:.1f} samples/s, {1000 * cpu / args.n:.1f} ms CPU/sample "
          f"({1000 * main / args.n:.1f} in the main process)")
    if temp:
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
