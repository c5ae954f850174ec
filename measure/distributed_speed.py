"""What Ray costs on one machine: layout metrics with the process pool versus Ray, and a
3-shard Ray SalBench run versus the single-process run, through the real commands.

1. `visioneval layout` on N CANVAS-shaped pairs (`write_random`, 80 boxes, 1024x768), all
   metrics but semantic match: `--workers 2` (the process pool) against `--executor ray`
   with a local Ray started by the command on the same 2 cores. Ray's overhead per pair is
   (Ray wall - pool wall) / N, start-up included and also shown apart.
2. `visioneval salbench` on synthetic P3/P3_box/P3_box_img against one loopback server
   (`--answer hash --latency 0.2`): one process with `--concurrency 48` against
   `--executor ray --shards 3 --concurrency 16` (the same 48 requests in flight), merge
   included; metrics.json is checked to be byte-equal.

    uv run --extra ray python measure/distributed_speed.py
    uv run --extra ray python measure/distributed_speed.py --pairs 200 --rows 100

Results go to stdout as Markdown; docs/PERFORMANCE.md records them.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from throughput import ENV, start_server  # noqa: E402


def timed(cmd: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed, proc.stderr


def ray_start_seconds() -> float:
    code = ("import time, os; os.environ['RAY_ENABLE_UV_RUN_RUNTIME_ENV'] = '0'; import ray; "
            "t = time.perf_counter(); ray.init(address='local', num_cpus=2, "
            "include_dashboard=False, log_to_driver=False); "
            "ray.get(ray.remote(lambda: 1).remote()); print(time.perf_counter() - t); "
            "ray.shutdown()")
    out = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True,
                         text=True, check=True).stdout
    return float(out.strip().splitlines()[-1])


def layout(work: Path, pairs: int) -> None:
    from visioneval.canvas.synth import write_random

    base = work / "canvas"
    write_random(base, pairs, boxes=80, seed=0)
    cmd = [sys.executable, "-m", "visioneval", "layout", "--base-dir", str(base),
           "--skip-semantic", "--no-progress"]
    pool, _ = timed([*cmd, "--workers", "2", "--out", str(work / "pool.json")])
    on_ray, _ = timed([*cmd, "--executor", "ray", "--out", str(work / "ray.json")])
    start = ray_start_seconds()
    print(f"\n### layout metrics, {pairs} pairs\n")
    print("| executor | wall s | ms per pair |\n|---|---:|---:|")
    print(f"| process pool, --workers 2 | {pool:.1f} | {1000 * pool / pairs:.1f} |")
    print(f"| Ray, local, 2 CPUs | {on_ray:.1f} | {1000 * on_ray / pairs:.1f} |")
    print(f"\nRay overhead: {1000 * (on_ray - pool) / pairs:.1f} ms per pair, of which "
          f"{start:.1f} s is starting a local Ray and running a first task.")


def salbench(work: Path, rows: int) -> None:
    from visioneval.benchmarks.salbench.synth import write_synthetic

    data = work / "salbench"
    write_synthetic(data, rows, seed=0)
    proc, url = start_server()
    try:
        cmd = [sys.executable, "-m", "visioneval", "salbench", "--backend", "openai",
               "--base-url", url + "/v1", "--model", "m", "--data-dir", str(data),
               "--configs", "P3,P3_box,P3_box_img", "--no-cache", "--no-progress",
               "--no-report"]
        single, _ = timed([*cmd, "--concurrency", "48", "--out", str(work / "one")])
        sharded, _ = timed([*cmd, "--concurrency", "16", "--executor", "ray", "--shards",
                            "3", "--out", str(work / "ray")])
    finally:
        proc.terminate()
        proc.wait()
    same = (work / "one" / "metrics.json").read_bytes() == \
        (work / "ray" / "metrics.json").read_bytes()
    n = (work / "one" / "samples.jsonl").read_bytes().count(b"\n")
    print(f"\n### SalBench, {n} requests, loopback at 0.2 s\n")
    print("| run | wall s | requests/s |\n|---|---:|---:|")
    print(f"| one process, --concurrency 48 | {single:.1f} | {n / single:.1f} |")
    print(f"| Ray, 3 shards x --concurrency 16 (merge included) | {sharded:.1f} | "
          f"{n / sharded:.1f} |")
    print(f"\nmetrics.json byte-equal: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=334, help="SalBench rows per config.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="distributed-speed-") as temp:
        layout(Path(temp), args.pairs)
        salbench(Path(temp), args.rows)


if __name__ == "__main__":
    main()
