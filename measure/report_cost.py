"""CPU the end-of-run report costs per 1,000 samples, on a real run: SalBench-shaped data of
1,000 rows with 768-pixel images, `visioneval salbench` at 64 in flight against a loopback
server without latency, each run in its own process, with and without `--no-report`
(alternated); CPU is the client process's user + system time (wait4). Then the report call
alone (`try_write_report`, in a fresh process that has imported visioneval as a run has),
and with `--profile` where its time goes (cProfile, or pyinstrument when installed).

    uv run python measure/report_cost.py                   # 768 px PNG scenes
    uv run python measure/report_cost.py --format jpeg     # the same scenes as JPEG
    uv run python measure/report_cost.py --profile         # and a profile of the report
"""

from __future__ import annotations

import argparse
import io
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Client processes run as on a user's machine: modules byte-compiled once and reused.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CALL = ("import sys, time; from pathlib import Path; import visioneval.cli; "
        "from visioneval.report import page; "
        "c = time.process_time(); page.try_write_report(Path(sys.argv[1])); "
        "print(time.process_time() - c)")
PROFILE = ("import sys; from pathlib import Path; import visioneval.cli; "
           "from visioneval.report import page; run = Path(sys.argv[1]); "
           "page.try_write_report(run)\n"
           "try:\n"
           "    from pyinstrument import Profiler\n"
           "except ImportError:\n"
           "    import cProfile, pstats\n"
           "    p = cProfile.Profile(); p.enable(); page.try_write_report(run); p.disable()\n"
           "    pstats.Stats(p).sort_stats('cumulative').print_stats(30)\n"
           "else:\n"
           "    p = Profiler(interval=0.0005); p.start(); page.try_write_report(run); p.stop()\n"
           "    print(p.output_text(color=False, show_all=False))\n")


def make_data(root: Path, n: int, side: int, image_format: str) -> Path:
    """n P3 rows: the synthetic scenes drawn at `side` pixels (antialiased edges), stored as
    PNG (compression level 6, as most writers) or JPEG (quality 90)."""
    from PIL import Image

    from visioneval.benchmarks.salbench.synth import make_scene
    from visioneval.io.parquet import write_hf_parquet

    rows = []
    for i in range(n):
        scene = make_scene(0, i)
        image = scene.image.convert("RGB").resize((side, side), Image.Resampling.BICUBIC)
        buf = io.BytesIO()
        if image_format == "png":
            image.save(buf, format="PNG")
        else:
            image.save(buf, format="JPEG", quality=90)
        rows.append({"image": {"bytes": buf.getvalue(), "path": f"{scene.image_id}.{image_format}"},
                     "question": scene.question("P3"), "answer": scene.feature,
                     "image_id": scene.image_id})
    write_hf_parquet(root / "P3" / "shard_00000.parquet", rows, ["image"])
    return root


def start_server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "visioneval", "loopback", "--port", "0",
                             "--answer", "hash"], stdout=subprocess.PIPE, text=True, env=ENV)
    assert proc.stdout is not None
    match = re.search(r"http://127\.0\.0\.1:\d+", proc.stdout.readline())
    assert match, "loopback did not start"
    return proc, match.group(0)


def run(url: str, data: Path, out: Path, concurrency: int, report: bool) -> tuple[float, float]:
    """(wall s, CPU s) of one `visioneval salbench` process."""
    cmd = [sys.executable, "-m", "visioneval", "salbench", "--backend", "openai", "--base-url",
           url + "/v1", "--model", "m", "--data-dir", str(data), "--configs", "P3",
           "--concurrency", str(concurrency), "--no-progress", "--no-cache", "--out", str(out),
           *([] if report else ["--no-report"])]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the run failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime


def report_alone(directory: Path) -> float:
    """CPU seconds of `try_write_report` in a fresh process (imports not counted)."""
    out = subprocess.run([sys.executable, "-c", CALL, str(directory)], check=True,
                         capture_output=True, text=True, env=ENV).stdout.split()
    return float(out[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--side", type=int, default=768, help="image side in pixels")
    parser.add_argument("--format", choices=("png", "jpeg"), default="png")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        data = make_data(work / "data", args.n, args.side, args.format)
        size = (data / "P3" / "shard_00000.parquet").stat().st_size / 1e6
        print(f"{args.n} rows, {args.side} px {args.format.upper()}, {size:.0f} MB of parquet, "
              f"made in {time.perf_counter() - started:.1f} s; load average "
              f"{os.getloadavg()[0]:.2f}")
        server, url = start_server()
        try:
            subprocess.run([sys.executable, "-c", "import visioneval.cli"], env=ENV, check=True)
            with_report: list[tuple[float, float]] = []
            without: list[tuple[float, float]] = []
            for i in range(args.repeat):
                without.append(run(url, data, work / f"bare-{i}", args.concurrency, False))
                with_report.append(run(url, data, work / f"full-{i}", args.concurrency, True))
        finally:
            server.terminate()
            server.wait()
        per = 1000 / args.n
        print("| run | wall (median) | CPU (median, min-max) |")
        print("|---|---:|---:|")
        for name, results in (("--no-report", without), ("with the report", with_report)):
            cpu = sorted(c for _, c in results)
            print(f"| {name} | {statistics.median(w for w, _ in results):.2f} s | "
                  f"{statistics.median(cpu):.2f} s ({cpu[0]:.2f}-{cpu[-1]:.2f}) |")
        added = statistics.median(c for _, c in with_report) - \
            statistics.median(c for _, c in without)
        print(f"the report adds {added * per:.2f} s of CPU per 1000 samples (medians)")
        alone = sorted(report_alone(work / "full-0") for _ in range(args.repeat))
        print(f"try_write_report alone: {statistics.median(alone) * per:.2f} s of CPU per 1000 "
              f"samples (median; {alone[0] * per:.2f}-{alone[-1] * per:.2f})")
        if args.profile:
            subprocess.run([sys.executable, "-c", PROFILE, str(work / "full-0")], env=ENV,
                           check=True)


if __name__ == "__main__":
    main()
