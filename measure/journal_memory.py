"""Peak memory and time of what a run does with its journal (resume's done set, then
metrics and tables: `session.finish`) at 10,000 and 130,000 records, each in a fresh
process. The report is measured separately (measure/report_scale.py).

    uv run python measure/journal_memory.py                 # illusionbench, 10k and 130k
    uv run python measure/journal_memory.py --benchmark salbench

Journals are written by `report.synthrun` from a small synthetic dataset's real samples
(errors, unreadable, wrong and right answers in fixed shares). docs/PERFORMANCE.md records
the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

FINISH = """
import json, sys, time
from pathlib import Path
from visioneval.core import registry
from visioneval.engine.runner import RunStats
from visioneval.core.store import RunStore
from visioneval.runs.session import finish
store = RunStore.open(Path(sys.argv[1]))
started = time.perf_counter()
from visioneval.core.idset import IdSet
done = IdSet(r.id for r in store.iter_latest() if r.ok)  # as run_session holds it
benchmark = registry.build(store.info["benchmark"], store.info["options"])
result = finish(benchmark, store, "finished", RunStats())
with open("/proc/self/status") as fh:
    peak = next(int(l.split()[1]) / 1024 for l in fh if l.startswith("VmHWM:"))
print(json.dumps({"records": result.n_records, "done": len(done), "peak_mb": peak,
                  "seconds": time.perf_counter() - started}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--benchmark", default="illusionbench",
                        choices=["illusionbench", "salbench"])
    parser.add_argument("--sizes", default="10000,130000")
    args = parser.parse_args()
    from visioneval.report.synthrun import write_run

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "data"
        subprocess.run([sys.executable, "-m", "visioneval", "data", f"synth-{args.benchmark}",
                        "--out", str(data)], check=True, env=ENV, stdout=subprocess.DEVNULL)
        options = {"data_dir": str(data)}
        print("| records | journal MB | done set + metrics + tables | peak RSS MB |")
        print("|---:|---:|---:|---:|")
        for size in (int(s) for s in args.sizes.split(",")):
            run = work / f"run-{size}"
            write_run(run, args.benchmark, options, size)
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", FINISH, str(run)], check=True,
                                 env=ENV, capture_output=True, text=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            mb = (run / "samples.jsonl").stat().st_size / 1e6
            print(f"| {result['records']} | {mb:.0f} | {result['seconds']:.1f} s "
                  f"(process {time.perf_counter() - t0:.1f} s) | {result['peak_mb']:.0f} |")


if __name__ == "__main__":
    main()
