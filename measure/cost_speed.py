"""What counting cost adds, and how fast `--dry-run` reads a big dataset.

1. Per answer: the engine counts usage per role and group (`UsageBook.add`) and, with
   --max-cost, charges the budget (`Budget.charge`): microseconds per call, in-process.
2. At the end of a run: `counts.cost` from the sessions (`run_cost`), and the first lookup in
   the genai-prices table (its data loads once per process), each in a fresh process.
3. `--dry-run` over an IllusionBench-shaped dataset (`visioneval data synth-illusionbench`,
   ROWS rows a part): the whole command as its own process, wall and CPU time, and the rate
   in samples per second (every image's header is read, no pixel decoded).

    uv run python measure/cost_speed.py               # ROWS = 2000 (6000 samples)
    uv run python measure/cost_speed.py --rows 10835  # the full size, 32,505 samples

docs/PERFORMANCE.md records the figures.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

from visioneval.core.records import GenerationSettings, Request, Response, user
from visioneval.cost.budget import Budget
from visioneval.cost.prices import ModelRef, given_price
from visioneval.cost.total import run_cost
from visioneval.cost.usage import UsageBook

LOOPBACK = ModelRef("openai", "m", "http://127.0.0.1:8765/v1")


def per_answer() -> dict[str, float]:
    """Microseconds per call, best of 5 runs of 100,000 calls."""
    book = UsageBook()
    response = Response(text="a", prompt_tokens=300, completion_tokens=2)
    groups = [f"g{i}" for i in range(6)]
    calls = iter(range(10**9))
    add = timeit.repeat(lambda: book.add("model", groups[next(calls) % 6], response),
                        number=100_000, repeat=5)
    budget = Budget.for_run(1e9, LOOPBACK, None, given_price(1, 2))
    request = Request((user("What is the odd one out?"),), GenerationSettings())
    charge = timeit.repeat(lambda: budget.charge("model", request, response),
                           number=100_000, repeat=5)
    return {"UsageBook.add": min(add) * 10, "Budget.charge": min(charge) * 10}


def at_finish(sessions: int) -> float:
    """Seconds for run_cost over `sessions` sessions of 6 groups each."""
    book = UsageBook()
    for g in range(6):
        book.add("model", f"g{g}", Response(text="a", prompt_tokens=300, completion_tokens=2))
    data = [{"usage": book.as_dict()}] * sessions
    started = time.perf_counter()
    run_cost(data, LOOPBACK, None, given_price(1, 2))
    return time.perf_counter() - started


def table_lookup() -> float:
    """Seconds for the first genai-prices lookup, in a fresh process (import included)."""
    code = ("import time; t = time.perf_counter();"
            "from visioneval.cost.prices import ModelRef, price_for;"
            "price_for(ModelRef('openai', 'gpt-4o', 'https://api.openai.com/v1'));"
            "print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return float(out.stdout)


def dry_run(rows: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "ib"
        subprocess.run([sys.executable, "-m", "visioneval", "data", "synth-illusionbench",
                        "--out", str(data), "--n", str(rows)], check=True,
                       capture_output=True)
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "visioneval", "illusionbench",
                                 "--backend", "openai", "--model", "gpt-4o", "--data-dir",
                                 str(data), "--dry-run"], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        stdout = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)  # this process's own CPU and peak RSS
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        assert proc.returncode == 0, stdout
    samples = int(next(line for line in stdout.splitlines()
                       if line.strip().startswith("requests")).split()[1].replace(",", ""))
    print(stdout)
    return {"samples": samples, "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "samples_per_s": samples / wall, "peak_rss_mb": usage.ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2000)
    args = parser.parse_args()
    print("| what | figure |\n|---|---:|")
    for name, micros in per_answer().items():
        print(f"| {name}, per answer | {micros:.2f} us |")
    print(f"| run_cost over 1,000 sessions x 6 groups | {1000 * at_finish(1000):.1f} ms |")
    print(f"| first genai-prices lookup (fresh process) | {table_lookup():.2f} s |")
    found = dry_run(args.rows)
    print(f"| --dry-run, {found['samples']:,} samples: wall | {found['wall_s']:.2f} s |")
    print(f"| --dry-run: CPU | {found['cpu_s']:.2f} s |")
    print(f"| --dry-run: samples/s | {found['samples_per_s']:,.0f} |")
    print(f"| --dry-run: peak RSS | {found['peak_rss_mb']:.0f} MB |")


if __name__ == "__main__":
    main()
