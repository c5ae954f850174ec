"""Peak RSS of reading and of running over 300 incompressible 1.26 MB PNGs, by parquet layout.

Writes the same 300 rows (648 px noise PNGs, ~1.26 MB each) as SalBench P3 parquet files in
several layouts, then for each layout:

- the reader alone: a fresh process iterates `iter_rows` over the file (every column a run
  reads) and reports its peak RSS (VmHWM) and read rate;
- a run: `visioneval salbench --backend openai --concurrency 64 --no-report --no-cache`
  against one loopback server (200 ms), its peak RSS and samples/s.

Layouts: as Hugging Face and pyarrow write by default (snappy, a dictionary, pages checked
every 1024 rows: a row group's images land in ONE dictionary page) with 100-row groups and
with one 300-row group; the same group without a dictionary (one data page), uncompressed,
gzip, zstd, lz4 (read by pyarrow: `pagestream` cannot stream LZ4), and with small pages (a
page per image; `write_hf_parquet`'s 8 rows).

    uv run python measure/big_images_memory.py
    uv run python measure/big_images_memory.py --repeat 3 --concurrency 16
    git archive c8e531f src | tar -x -C /tmp/before     # an older reader, for "before"
    uv run python measure/big_images_memory.py --repeat 3 --src /tmp/before/src
    uv run python measure/big_images_memory.py --only "HF default"

Each figure is the range over `--repeat` runs. Results go to stdout as a Markdown table;
docs/PERFORMANCE.md records them.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
from throughput import ENV, _peak_rss_mb, start_server  # noqa: E402

N = 300
SIDE = 648  # 648 x 648 x 3 bytes of noise: a 1.26 MB PNG
PYARROW_PAGE_ROWS = 1024  # pyarrow's default write_batch_size: a page per row group here
COLUMNS = ["image", "question", "answer", "image_id"]


@dataclass(frozen=True)
class Layout:
    group: int  # rows per row group
    page_rows: int  # rows per data page at most
    compression: str = "snappy"
    dictionary: bool = True


LAYOUTS = {
    "100-row groups (HF default)": Layout(100, PYARROW_PAGE_ROWS),
    "one 300-row group (HF default)": Layout(300, PYARROW_PAGE_ROWS),
    "one 300-row group, no dictionary: one data page": Layout(300, PYARROW_PAGE_ROWS,
                                                              dictionary=False),
    "one 300-row group, uncompressed, one data page": Layout(300, PYARROW_PAGE_ROWS, "none",
                                                             False),
    "one 300-row group, gzip, one data page": Layout(300, PYARROW_PAGE_ROWS, "gzip", False),
    "one 300-row group, zstd": Layout(300, PYARROW_PAGE_ROWS, "zstd"),
    "one 300-row group, lz4 (read by pyarrow)": Layout(300, PYARROW_PAGE_ROWS, "lz4"),
    "one 300-row group, a page per image": Layout(300, 1),
    "one 300-row group, 8 rows per page (write_hf_parquet)": Layout(300, 8),
}

READER = """
import sys, time
from pathlib import Path
from visioneval.io.parquet import iter_rows
started = time.perf_counter()
size = 0
for row in iter_rows([Path(sys.argv[1])], sys.argv[2:]):
    size += len(row.values["image"]["bytes"])
seconds = time.perf_counter() - started
with open("/proc/self/status") as fh:
    peak = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024
print(size, seconds, peak)
"""


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


def write_layout(root: Path, table: pa.Table, layout: Layout) -> Path:
    """The rows as SalBench's P3 config, in the HF schema, in `layout`."""
    path = root / "P3" / "shard_00000.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=layout.group, write_batch_size=layout.page_rows,
                   compression=layout.compression, use_dictionary=layout.dictionary)
    return root


def largest_page_mb(path: Path) -> float:
    """The largest page of the image column, read with visioneval's page-header parser."""
    from visioneval.io.pageheader import read_page_header

    handle = pq.ParquetFile(path)
    leaf = next(i for i in range(len(handle.schema))
                if handle.schema.column(i).path == "image.bytes")
    largest = 0
    with open(path, "rb") as fh:
        for group in range(handle.metadata.num_row_groups):
            column = handle.metadata.row_group(group).column(leaf)
            start = column.dictionary_page_offset or column.data_page_offset
            position, end = start, start + column.total_compressed_size
            while position < end:
                fh.seek(position)
                header = read_page_header(fh.read)
                largest = max(largest, header.uncompressed_size)
                position += header.size + header.compressed_size
    return largest / 1e6


def read_alone(data: Path, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", READER, str(data / "P3" / "shard_00000.parquet"),
                          *COLUMNS], env=env, check=True, capture_output=True, text=True)
    size, seconds, peak = out.stdout.split()
    return {"rate": int(size) / float(seconds) / 1e6, "rss": float(peak)}


def run(url: str, data: Path, work: Path, concurrency: int, tag: str, env: dict) -> dict:
    out_dir = work / f"run-{tag}"
    cmd = [sys.executable, "-m", "visioneval", "salbench", "--backend", "openai",
           "--base-url", url + "/v1", "--model", "m", "--data-dir", str(data),
           "--configs", "P3", "--concurrency", str(concurrency), "--no-progress",
           "--no-report", "--no-cache", "--out", str(out_dir)]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
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


def span(values: list[float], digits: int = 0) -> str:
    low, high = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return low if low == high else f"{low}-{high}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", default="", help="only the layouts whose name has this")
    parser.add_argument("--src", type=Path, help="read and run with the visioneval package "
                        "of this src folder (another checkout), not this one")
    args = parser.parse_args()
    env = dict(ENV, PYTHONPATH=str(args.src.resolve())) if args.src else ENV
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = noise_rows(N)
        size = sum(len(r["image"]["bytes"]) for r in rows) / N / 1e6
        from visioneval.io.parquet import write_hf_parquet

        write_hf_parquet(work / "rows.parquet", rows, ["image"])  # the HF schema, once
        table = pq.read_table(work / "rows.parquet").combine_chunks()  # one write batch
        del rows
        print(f"{N} noise PNGs, {size:.2f} MB each; pyarrow {pa.__version__}", file=sys.stderr)
        server, url = start_server()
        try:
            lines = ["| layout | largest page MB | reader alone: peak RSS MB | reader alone: "
                     "MB/s | run: samples | run: errors | run: samples/s | run: peak RSS MB |",
                     "|---|---:|---:|---:|---:|---:|---:|---:|"]
            for i, (name, layout) in enumerate(LAYOUTS.items()):
                if args.only not in name:
                    continue
                data = write_layout(work / f"data-{i}", table, layout)
                reads = [read_alone(data, env) for _ in range(args.repeat)]
                runs = [run(url, data, work, args.concurrency, f"{i}-{k}", env)
                        for k in range(args.repeat)]
                page = largest_page_mb(data / "P3" / "shard_00000.parquet")
                lines.append(f"| {name} | {page:.1f} | {span([r['rss'] for r in reads])} | "
                             f"{span([r['rate'] for r in reads])} | "
                             f"{span([r['n'] for r in runs])} | "
                             f"{span([r['errors'] for r in runs])} | "
                             f"{span([r['rate'] for r in runs], 1)} | "
                             f"{span([r['rss'] for r in runs])} |")
                print(lines[-1], file=sys.stderr)
                for path in (data / "P3").iterdir():
                    path.unlink()
            print("\n".join(lines))
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
