"""How fast `visioneval rescore --from lmms-eval` reads a big log, and whether its memory
stays flat as the log grows.

Writes SalBench samples files in lmms-eval 0.7's layout (every metric field its salbench
`process_results` logs: the per-class true/false positive dicts make a P3 line about 1.4 KB
and an O3 line about 2.6 KB), spread over the six tasks, then runs the real command as a
subprocess (`--no-report`) on N lines and on N/10 lines, and reports wall time, lines per
second and the child's peak RSS (`wait4`).

    uv run python measure/rescore_speed.py                 # 130,000 and 13,000 lines
    uv run python measure/rescore_speed.py --lines 20000

Results go to stdout as Markdown; docs/PERFORMANCE.md records them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASKS = {"p3": ("orientation", "color", "size"), "p3_box": ("orientation", "color", "size"),
         "p3_box_img": ("orientation", "color", "size"),
         "o3": ("orientation", "color", "focus", "shape", "size", "location", "pattern"),
         "o3_box": ("orientation", "color", "focus", "shape", "size", "location", "pattern"),
         "o3_box_img": ("orientation", "color", "focus", "shape", "size", "location",
                        "pattern")}
SUFFIX = "\nAnswer the question using a single word or phrase."


def sample_line(doc_id: int, classes: tuple[str, ...], rng: random.Random) -> str:
    gold = {rng.choice(classes)}
    pred = {rng.choice(classes)} if rng.random() < 0.9 else {"I cannot tell."}
    text = ", ".join(sorted(pred))
    cats = {c: {"true_pos": int(c in pred and c in gold), "false_pos": int(c in pred and
                                                                          c not in gold),
                "true_neg": int(c not in pred and c not in gold),
                "false_neg": int(c not in pred and c in gold)} for c in classes}
    image_id = f"image_{doc_id:06d}_{rng.randrange(10**6)}"
    fields = {"doc_id": doc_id, "target": ", ".join(sorted(gold)), "filtered_resps": text,
              "token_counts": [{"input_tokens": 700, "output_tokens": 3}],
              "doc_hash": f"{rng.getrandbits(256):064x}",
              "exact_match": {"score": int(pred == gold)},
              "sample_precision": {"score": 0.5}, "sample_recall": {"score": 0.5},
              "sample_f1": {"score": 0.5}}
    for name in ("all_cat_precision", "all_cat_recall", "all_cat_f1"):
        fields[name] = {"id": image_id, "pred": cats}
    for c in classes:
        for m in ("precision", "recall", "f1"):
            fields[f"{c}_{m}"] = {"pred": cats[c]}
    fields["input"] = ("Context: Given this list of low level visual features defined "
                       "according to feature integration theory: ... Task: Examine this "
                       "image and identify the feature(s)." + SUFFIX)
    return json.dumps(fields)


def write_logs(folder: Path, lines: int) -> int:
    """`lines` lines over the six tasks; the total size in bytes."""
    folder.mkdir(parents=True)
    rng = random.Random(0)
    per_task = -(-lines // len(TASKS))
    size, left = 0, lines
    for task, classes in TASKS.items():
        path = folder / f"20260101_000000_samples_{task}.jsonl"
        with open(path, "w") as fh:
            for doc_id in range(min(per_task, left)):
                fh.write(sample_line(doc_id, classes, rng) + "\n")
        left -= min(per_task, left)
        size += path.stat().st_size
    return size


def run(folder: Path, out: Path) -> tuple[float, int]:
    """(wall seconds, peak RSS in MB) of one rescore command."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "visioneval", "rescore", "--from",
                             "lmms-eval", str(folder), "--out", str(out), "--no-report"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"rescore failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return elapsed, usage.ru_maxrss // 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=130_000)
    args = parser.parse_args()
    print("| log lines | log MB | wall s | lines/s | peak RSS MB |")
    print("|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (args.lines // 10, args.lines):
            folder = Path(tmp) / f"logs-{n}" / "model"
            size = write_logs(folder, n)
            seconds, rss = run(folder, Path(tmp) / f"run-{n}")
            records = json.loads((Path(tmp) / f"run-{n}" / "run.json").read_text())
            assert records["counts"]["records"] == n, records["counts"]
            print(f"| {n:,} | {size / 1e6:.0f} | {seconds:.1f} | {n / seconds:,.0f} | {rss} |")


if __name__ == "__main__":
    main()
