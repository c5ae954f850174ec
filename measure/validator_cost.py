"""Per-sample cost of the built-in code validators in `visioneval evaluate`.

Writes N eval cases (count, ocr, json and chart in turn, short answers as AgentV's vision
examples) and runs `python -m visioneval evaluate CASES --out DIR --no-progress --no-report`
as its own process, three times; prints the wall time of the process, the session's time
from run.json (first sample to last record) and the CPU of the process (kernel accounting,
children included: a validator run as a subprocess is counted), each per sample.

    uv run python measure/validator_cost.py            # N = 400
    uv run python measure/validator_cost.py --n 1000

Run it against another checkout with `PYTHONPATH=/that/checkout/src` (the command runs
`sys.executable -m visioneval` and inherits the environment). docs/PERFORMANCE.md records the
figures before (one subprocess per sample) and after (in-process calls).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# As a normal install runs (bytecode cached): this sandbox sets PYTHONDONTWRITEBYTECODE,
# which would make every validator subprocess compile visioneval's modules again.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

CASES = [
    {"output": "5 red bottles, 3 cans on the table", "expected_output": "5 bottles, 3 cans",
     "evaluators": [{"validator": "count"}]},
    {"output": "Project Proposal Q1 2026 - budget review",
     "expected_output": "Project Proposal Q1 2026",
     "evaluators": [{"validator": "ocr", "options": {"keywords": ["budget"]}}]},
    {"output": 'Here it is: {"name": "Ann", "age": 3, "tags": ["a", "b"]}',
     "expected_output": '{"name": "", "age": 0, "tags": [""]}',
     "evaluators": [{"validator": "json"}]},
    {"output": "Revenue was $2.4M in Q4 2024, up 58% since March 2023",
     "expected_output": "$2.4M, 58%, Q4 2024", "evaluators": [{"validator": "chart"}]},
]


def write_cases(path: Path, n: int) -> None:
    lines = [json.dumps({"id": f"c{i}", **CASES[i % len(CASES)]}) for i in range(n)]
    path.write_text("\n".join(lines) + "\n")


def run_once(cases: Path, out: Path) -> dict[str, float]:
    """One evaluate process: wall seconds, session seconds, CPU seconds (with children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "visioneval", "evaluate", str(cases),
                           "--out", str(out), "--no-progress", "--no-report"],
                          capture_output=True, text=True, env=ENV)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"evaluate exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    info = json.loads((out / "run.json").read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "session": info["sessions"][-1]["seconds"], "cpu": cpu,
            "records": info["counts"]["records"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400, help="validator cases (default 400)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cases = root / "cases.jsonl"
        write_cases(cases, args.n)
        runs = [run_once(cases, root / f"run{k}") for k in range(args.repeat)]
    for run in runs:
        assert run["records"] == args.n, run
    print(f"{args.n} validator samples, {args.repeat} runs of `python -m visioneval evaluate`")
    print("| run | wall s | session s | CPU s | wall ms/sample | session ms/sample | "
          "CPU ms/sample |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for k, run in enumerate(runs, 1):
        print(f"| {k} | {run['wall']:.2f} | {run['session']:.2f} | {run['cpu']:.2f} | "
              f"{1000 * run['wall'] / args.n:.2f} | {1000 * run['session'] / args.n:.3f} | "
              f"{1000 * run['cpu'] / args.n:.2f} |")
    median = {k: statistics.median(r[k] for r in runs) for k in ("wall", "session", "cpu")}
    print(f"| median | {median['wall']:.2f} | {median['session']:.2f} | {median['cpu']:.2f} | "
          f"{1000 * median['wall'] / args.n:.2f} | {1000 * median['session'] / args.n:.3f} | "
          f"{1000 * median['cpu'] / args.n:.2f} |")


if __name__ == "__main__":
    main()
