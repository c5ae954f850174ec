"""Peak traced memory (tracemalloc) of a `--batch` session as the number of samples grows.

Synthetic SalBench data (`salbench.synth.write_synthetic`, three samples a scene) goes
through the loopback server's emulated OpenAI Batch API (`ThreadedServer`, in this
process); each run is a fresh child process that traces its own Python allocations from
the session's start (`visioneval.api.run(..., batch=True)`, no response cache, no report)
to its end: the peak while batches are sent, waited for and recorded, and apart from it
the peak of the run's end (`session.finish`: metrics and tables from the journal, the same
code before and after). Batches hold at most `--batch-requests` requests, as an
image-heavy run's do under the provider's 200 MB cap (~120 requests of 1.2 MB PNGs): a
run's samples are then spread over many batches in flight at once, every one of them
waiting on the same provider.

    uv run python measure/batch_memory.py                     # 3,000 and 12,000
    git archive f18c5aa src | tar -x -C /tmp/before    # the batch runner before, for "before"
    uv run python measure/batch_memory.py --src /tmp/before/src

docs/PERFORMANCE.md records the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

CHILD = """
import json, sys, time, tracemalloc
from pathlib import Path
import visioneval.runs.session as session
from visioneval.api import run
from visioneval.backends.batch.base import BatchLimits
from visioneval.backends.batch.openai import OpenAIBatch
from visioneval.engine.options import EngineOptions

base_url, data, out, per_batch = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
OpenAIBatch.limits = BatchLimits(per_batch, 200 * 1_000_000)
peaks = {}
finish = session.finish

def timed_finish(*args, **kwargs):  # the batches' peak, then the end of the run's own
    peaks["batches"] = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    return finish(*args, **kwargs)

session.finish = timed_finish
tracemalloc.start()
started = time.perf_counter()
result = run("salbench", model="m", backend="openai", base_url=base_url,
             options={"data_dir": data, "splits": ["synthetic"]}, out=out, report=False,
             batch=True, engine=EngineOptions(cache_path=None))
seconds = time.perf_counter() - started
peaks["finish"] = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
with open("/proc/self/status") as fh:
    rss = next(int(line.split()[1]) / 1024 for line in fh if line.startswith("VmHWM:"))
info = json.loads((out / "run.json").read_text())
print(json.dumps({"records": result.n_records, "errors": result.n_errors,
                  "batches": len(info["batch"]["batches"]),
                  "peak_mb": max(peaks.values()) / 2**20,
                  "batches_mb": peaks["batches"] / 2**20, "finish_mb": peaks["finish"] / 2**20,
                  "rss_mb": rss, "seconds": seconds}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="3000,12000", help="samples per run (x3 scenes)")
    parser.add_argument("--batch-requests", type=int, default=1000)
    parser.add_argument("--src", type=Path, default=None,
                        help="another checkout's src/ to measure (an older batch runner)")
    args = parser.parse_args()
    from visioneval.benchmarks.salbench.synth import write_synthetic
    from visioneval.loopback.batches import BatchScript
    from visioneval.loopback.server import ServerScript, ThreadedServer

    env = dict(ENV)
    if args.src is not None:
        env["PYTHONPATH"] = str(args.src.resolve())
    print("| samples | batches | records | errors | peak traced MB: sending and collecting "
          "| finishing (metrics, tables) | peak RSS MB | s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp, \
            ThreadedServer(ServerScript(batches=BatchScript(delay_s=1.0))) as server:
        for size in (int(s) for s in args.sizes.split(",")):
            data = Path(tmp) / f"data-{size}"
            write_synthetic(data, size // 3, seed=7)
            out = Path(tmp) / f"run-{size}"
            done = subprocess.run(
                [sys.executable, "-c", CHILD, server.base_url + "/v1", str(data), str(out),
                 str(args.batch_requests)], env=env, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"the run of {size} samples failed:\n{done.stderr[-2000:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"| {size:,} | {result['batches']} | {result['records']:,} | "
                  f"{result['errors']} | {result['batches_mb']:.1f} | "
                  f"{result['finish_mb']:.1f} | {result['rss_mb']:.0f} | "
                  f"{result['seconds']:.1f} |")


if __name__ == "__main__":
    main()
