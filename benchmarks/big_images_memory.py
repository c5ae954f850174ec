"""Peak RSS of a real run over 300 incompressible 1.26 MB PNGs, by parquet layout.

Writes the same 300 rows (648 px noise PNGs, ~1.26 MB each) as SalBench P3 parquet files in
several layouts, then runs `visioneval salbench --backend openai --concurrency 64
--no-report` against one loopback server (200 ms) on each, and prints the peak RSS of the
visioneval process (VmHWM) and the rate:

- `100-row groups` and `one 300-row group`: written as Hugging Face and pyarrow write by
  default, which puts a whole row group in one data page (a page holds up to 1024 rows);
- `one 300-row group, a page per image` and `..., 8 rows per page`: the same group written
  with small pages (`write_hf_parquet`'s default is 8 rows).

    uv run python benchmarks/big_images_memory.py
    uv run python benchmarks/big_images_memory.py --concurrency 16

Results go to stdout as a Markdown table; docs/PERFORMANCE.md records them.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
from throughput import ENV, _peak_rss_mb, start_server  # noqa: E402

N = 300
SIDE = 648  # 648 x 648 x 3 bytes of noise: a 1.26 MB PNG
PYARROW_PAGE_ROWS = 1024  # pyarrow's default write_batch_size: a page per row group here
LAYOUTS = {  # name -> (rows per row group, rows per data page at most)
    "100-row groups": (100, PYARROW_PAGE_ROWS),
    "one 300-row group": (300, PYARROW_PAGE_ROWS),
    "one 300-row group, a page per image": (300, 1),
    "one 300-row group, 8 rows per page (write_hf_parquet)": (300, 8),
}


def noise_rows(n: int) -> list[dict]:
    from PIL import Image

    from visioneval.benchmarks.salbench.synth import QUESTION_D

    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        pixels = rng.integers(0, 256, size=(SIDE, SIDE, 3), dtype=np.uint8)
        buf = io.BytesIO()
        Image.fromarray(pixels).save(buf, format="PNG", compress_level=1)
        rows.append({"image": {"bytes": buf.getvalue(), "path": f"noise-{i}.png"},
                     "question": QUESTION_D, "answer": "color", "image_id": f"noise-{i}"})
    return rows


def write_layout(root: Path, rows: list[dict], group: int, page_rows: int) -> Path:
    """The rows as SalBench's P3 config, in the HF schema (`write_hf_parquet`), with the
    given row-group size and at most `page_rows` rows per data page."""
    from visioneval.benchmarks.parquet import write_hf_parquet

    write_hf_parquet(root / "P3" / "shard_00000.parquet", rows, ["image"], row_group=group,
                     page_rows=page_rows)
    return root


def run(url: str, data: Path, work: Path, concurrency: int, tag: str) -> dict:
    import subprocess

    out_dir = work / f"run-{tag}"
    cmd = [sys.executable, "-m", "visioneval", "salbench", "--backend", "openai",
           "--base-url", url + "/v1", "--model", "m", "--data-dir", str(data),
           "--configs", "P3", "--concurrency", str(concurrency), "--no-progress",
           "--no-report", "--no-cache", "--out", str(out_dir)]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _peak_rss_mb(proc.pid) or 0.0)
        time.sleep(0.01)
    if proc.returncode != 0:
        raise SystemExit(f"run failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    session = json.loads((out_dir / "run.json").read_text())["sessions"][-1]
    return {"n": session["finished"], "errors": session["errors"],
            "rate": session["finished"] / session["seconds"],
            "wall": time.perf_counter() - started, "rss": peak}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = noise_rows(N)
        size = sum(len(r["image"]["bytes"]) for r in rows) / N / 1e6
        print(f"{N} noise PNGs, {size:.2f} MB each; pyarrow {pa.__version__}", file=sys.stderr)
        server, url = start_server()
        try:
            lines = ["| layout | samples | errors | samples/s | peak RSS MB |",
                     "|---|---:|---:|---:|---:|"]
            for i, (name, (group, page_rows)) in enumerate(LAYOUTS.items()):
                data = write_layout(work / f"data-{i}", rows, group, page_rows)
                result = run(url, data, work, args.concurrency, str(i))
                lines.append(f"| {name} | {result['n']} | {result['errors']} | "
                             f"{result['rate']:.1f} | {result['rss']:.0f} |")
                print(lines[-1], file=sys.stderr)
            print("\n".join(lines))
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
