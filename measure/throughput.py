"""Throughput, CPU and memory of visioneval's engine against two bare reference loops.

Every client runs as its own process against one loopback server process (200 ms latency),
sending the same requests; CPU time and peak RSS come from the kernel (wait4) for each
client process as a whole, start-up included.

    uv run python measure/throughput.py                # small images, N = 1000
    uv run python measure/throughput.py --big          # 300 incompressible 1.2 MB PNGs
    uv run python measure/throughput.py --rss-sweep    # visioneval peak RSS as N grows

Results go to stdout as a Markdown table; docs/PERFORMANCE.md records them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
LATENCY = 0.2


def make_small(root: Path, n: int) -> Path:
    from visioneval.benchmarks.salbench.synth import write_synthetic

    write_synthetic(root, n, seed=0)
    return root


def make_big(root: Path, n: int) -> Path:
    """n rows whose PNGs are random noise (incompressible), about 1.2 MB each."""
    import io

    from PIL import Image

    from visioneval.benchmarks.salbench.synth import QUESTION_D
    from visioneval.io.parquet import write_hf_parquet

    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        pixels = rng.integers(0, 256, size=(632, 632, 3), dtype=np.uint8)
        buf = io.BytesIO()
        Image.fromarray(pixels).save(buf, format="PNG", compress_level=1)
        rows.append({"image": {"bytes": buf.getvalue(), "path": f"noise-{i}.png"},
                     "question": QUESTION_D, "answer": "color", "image_id": f"noise-{i}"})
    write_hf_parquet(root / "P3" / "shard_00000.parquet", rows, ["image"], row_group=16)
    return root


# Client processes run as on a user's machine: modules byte-compiled once and reused.
# (This sandbox sets PYTHONDONTWRITEBYTECODE, which would add ~1 s of compiling per process.)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
WARM_UP = ("import visioneval.cli, visioneval.commands.run, visioneval.runs.session, "
           "visioneval.backends.openai, visioneval.loopback.server, openai, aiohttp, "
           "pyarrow.parquet")


def start_server() -> tuple[subprocess.Popen, str]:
    subprocess.run([sys.executable, "-c", WARM_UP], env=ENV, check=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "visioneval", "loopback", "--port", "0", "--answer", "hash",
         "--latency", str(LATENCY)], stdout=subprocess.PIPE, text=True, env=ENV)
    line = proc.stdout.readline()
    url = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
    return proc, url


def _peak_rss_mb(pid: int) -> float | None:
    """VmHWM of a live process. (ru_maxrss is no good here: after fork and exec a child
    inherits its parent's high-water mark.)"""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def measure(cmd: list[str]) -> tuple[str, float, float, float]:
    """Run a client process; (stdout, wall s, CPU s from wait4, peak RSS MB from /proc)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=ENV)
        peak = 0.0
        while proc.poll() is None:
            peak = max(peak, _peak_rss_mb(proc.pid) or 0.0)
            time.sleep(0.02)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    # poll() reaped the child; its CPU time is in RUSAGE_CHILDREN, read as a difference.
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd[:4]} failed:\n{stderr}")
    return stdout, wall, _child_cpu(), peak


_CPU_SEEN = 0.0


def _child_cpu() -> float:
    """CPU seconds of children reaped since the last call."""
    global _CPU_SEEN
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    delta, _CPU_SEEN = total - _CPU_SEEN, total
    return delta


def run_visioneval(url: str, data: Path, work: Path, concurrency: int, tag: str,
                   limit: int | None = None) -> dict:
    out_dir = work / f"run-{tag}"
    cmd = [sys.executable, "-m", "visioneval", "salbench", "--backend", "openai",
           "--base-url", url + "/v1", "--model", "m", "--data-dir", str(data), "--configs", "P3",
           "--concurrency", str(concurrency), "--no-progress", "--no-report",
           "--out", str(out_dir),
           "--cache-dir", str(work / f"cache-{tag}")]
    if limit:
        cmd += ["--num-samples", str(limit)]
    _, wall, cpu, rss = measure(cmd)
    info = json.loads((out_dir / "run.json").read_text())
    session = info["sessions"][-1]
    return {"client": "visioneval", "n": session["finished"], "seconds": session["seconds"],
            "run_cpu": session["cpu_seconds"], "errors": session["errors"], "wall": wall,
            "cpu": cpu, "rss": rss}


def run_reference(client: str, url: str, data: Path, concurrency: int,
                  limit: int | None = None) -> dict:
    cmd = [sys.executable, str(HERE / "reference_loops.py"), client, url + "/v1", str(data), "P3",
           str(concurrency)] + ([str(limit)] if limit else [])
    out, wall, cpu, rss = measure(cmd)
    return json.loads(out.strip().splitlines()[-1]) | {"wall": wall, "cpu": cpu, "rss": rss}


def table(results: list[dict], ideal: float, unit: str = "sample") -> str:
    """Rate over the request phase; CPU per sample both for the request phase alone (what the
    engine costs) and for the whole process (start-up, imports and dataset checks included).
    `ideal`: the rate the concurrency and latency allow; `unit`: what one item is."""
    lines = [f"| client | {unit}s | errors | {unit}s/s | % of ideal | CPU ms/{unit}, run | "
             f"CPU ms/{unit}, whole process | peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        rate = r["n"] / r["seconds"]
        lines.append(f"| {r['client']} | {r['n']} | {r['errors']} | {rate:.1f} | "
                     f"{100 * rate / ideal:.0f}% | {1000 * r['run_cpu'] / r['n']:.2f} | "
                     f"{1000 * r['cpu'] / r['n']:.2f} | {r['rss']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big", action="store_true", help="300 incompressible 1.2 MB images")
    parser.add_argument("--rss-sweep", action="store_true", help="visioneval RSS as N grows")
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    n = args.n or (300 if args.big else 1000)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        data = make_big(work / "data", n) if args.big else make_small(work / "data", n)
        print(f"dataset: {n} rows ({'1.2 MB noise PNGs' if args.big else 'synthetic P3'}), "
              f"made in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        server, url = start_server()
        _child_cpu()  # count only the clients' CPU (the warm-up import is a child too)
        try:
            if args.rss_sweep:
                sweep = []
                for size in (n // 4, n // 2, n):
                    sub = work / f"data-{size}"
                    (make_big if args.big else make_small)(sub, size)
                    sweep.append(run_visioneval(url, sub, work, args.concurrency, f"n{size}"))
                print(table(sweep, args.concurrency / LATENCY))
                return
            results = [run_visioneval(url, data, work, args.concurrency, "main"),
                       run_reference("aiohttp", url, data, args.concurrency),
                       run_reference("openai", url, data, args.concurrency)]
            print(table(results, args.concurrency / LATENCY))
            # The report is a separate cost (the runs above use --no-report): measure it.
            _, wall, cpu, rss = measure([sys.executable, "-m", "visioneval", "report",
                                         str(work / "run-main")])
            print(f"\nreport.html for that run: {wall:.1f} s wall, {cpu:.1f} s CPU, "
                  f"peak RSS {rss:.0f} MB")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
