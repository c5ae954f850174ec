"""What checking the judges costs a run: the example's judge cases repeated to N cases,
graded by the loopback judge that reads the scenes (latency 50 ms), without and with every
control, and with a second judge; requests, wall time, CPU of the visioneval process, and
the time to read the records into the judges' cards (`EvalRun.summarize`).

    uv run python measure/judge_checks_cost.py [--copies 20]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from visioneval.core.store import RunStore
from visioneval.evaluators.evaluate import build
from visioneval.loopback.server import ANSWER_MODES, ServerScript, ThreadedServer

EXAMPLES = Path(__file__).parent.parent / "examples" / "evaluators"


def case_file(folder: Path, copies: int) -> Path:
    shutil.copytree(EXAMPLES / "scenes", folder / "scenes")
    shutil.copy(EXAMPLES / "office.png", folder / "office.png")
    kept = [c for c in yaml.safe_load((EXAMPLES / "cases.yaml").read_text())["cases"]
            if c.get("images") and all("judge" in e for e in c["evaluators"])]
    cases = [{**c, "id": f"{c['id']}-{k}"} for k in range(copies) for c in kept]
    path = folder / "cases.yaml"
    path.write_text(yaml.safe_dump({"cases": cases}))
    return path


def run(cases: Path, out: Path, urls: list[str], *extra: str) -> tuple[float, float]:
    judges = ["--judge-backend", "openai"]
    for url in urls:
        judges += ["--judge-model", "m", "--judge-base-url", url]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "visioneval", "evaluate", str(cases), *judges,
                    "--out", str(out), "--no-progress", "--no-cache", "--concurrency", "16",
                    *extra], check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=20)
    args = parser.parse_args()
    script = ServerScript(answer=ANSWER_MODES["judge-sees"], latency_s=0.05)
    with tempfile.TemporaryDirectory() as tmp, ThreadedServer(script) as one, \
            ThreadedServer(ServerScript(answer=ANSWER_MODES["judge"], latency_s=0.05)) as two:
        root = Path(tmp)
        cases = case_file(root / "cases", args.copies)
        print("| run | samples | requests/s | wall s | CPU s | CPU ms per sample | "
              "reading the records s |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, urls, extra in (
                ("one judge, no controls", [one.base_url + "/v1"], ()),
                ("one judge, --judge-controls all", [one.base_url + "/v1"],
                 ("--judge-controls", "all")),
                ("two judges, --judge-controls all", [one.base_url + "/v1",
                                                      two.base_url + "/v1"],
                 ("--judge-controls", "all"))):
            out = root / name.replace(" ", "-").replace(",", "")
            wall, cpu = run(cases, out, urls, *extra)
            store = RunStore.open(out)
            benchmark = build(store.info.options, reading=True)
            started = time.perf_counter()
            benchmark.summarize(store.iter_records())
            reading = time.perf_counter() - started
            samples = sum(1 for _ in store.iter_records())
            print(f"| {name} | {samples} | {samples / wall:.0f} | {wall:.1f} | {cpu:.1f} | "
                  f"{1000 * cpu / samples:.2f} | {reading:.2f} |")


if __name__ == "__main__":
    main()
