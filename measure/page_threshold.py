"""Which reader pays, by page size: CPU per row and peak memory of `iter_rows` reading an
image column with pyarrow and with the page streamer (`pagestream`), for pages from a few
KB to hundreds of MB.

Each file is a HF-style parquet file (an Image struct of incompressible bytes, a question
and an image id; snappy, pyarrow's dictionary default) whose image pages hold a fixed number
of rows (`write_batch_size=N, data_page_size=1`). For each file and reader a fresh process
iterates `iter_rows` over all three columns: `streaming=ALWAYS` streams every binary
column, `streaming=NEVER` leaves every column to pyarrow. It reports the CPU time of the loop
(`time.process_time`, best of `--repeat`) per row and per MB, and its peak RSS (VmHWM) less
its RSS before the loop (the reader's own memory, median of `--repeat`). "default" is the
reader `iter_rows` picks by itself (`parquet.Streaming`), and "choice µs" what picking it
cost (best of 5: a look at the chunk's metadata, then at its page headers when the chunk is
bigger than `pages_over`).

    uv run python measure/page_threshold.py
    uv run python measure/page_threshold.py --repeat 5 --only 8KB
    uv run visioneval data synth-illusionbench --out /tmp/ib --n 2000
    uv run python measure/page_threshold.py --data /tmp/ib   # a set's files, 3 readers

Results go to stdout as a Markdown table; docs/PERFORMANCE.md ("Which reader for which
page size") records them and the thresholds chosen from them (`parquet.Streaming`).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
COLUMNS = ["image", "question", "image_id"]
# (label, image bytes, rows in the file, rows per page for each file)
CASES = [
    ("8KB", 8_000, 8192, [1, 2, 4, 16, 128, 512, 1024, 2048, 4096]),
    ("2KB", 2_000, 16384, [1, 8, 64]),
    ("128KB", 128_000, 1024, [1, 8, 16, 32, 64, 128, 512]),
    ("256KB", 256_000, 512, [1, 4, 16]),
    ("512KB", 512_000, 256, [1, 2, 8]),
    ("1.25MB", 1_250_000, 256, [1, 2, 4, 8, 16, 64, 256]),
]

READER = """
import sys, time
from pathlib import Path
from visioneval.io import parquet
from visioneval.io.parquet import iter_rows

def status(key):
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith(key)) / 1024

path, mode, columns = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
streaming = {"streamed": parquet.ALWAYS, "pyarrow": parquet.NEVER}.get(mode, parquet.STREAMING)
before = status("VmRSS:")
started = time.process_time()
rows = size = 0
for row in iter_rows([path], columns, streaming=streaming):
    rows += 1
    size += len(row.values["image"]["bytes"])
cpu = time.process_time() - started
print(rows, size, cpu, status("VmHWM:") - before)
"""


def write_file(path: Path, image_bytes: int, rows: int, page_rows: int) -> None:
    rnd = random.Random(0)
    images = [{"bytes": rnd.randbytes(image_bytes), "path": f"{i}.png"} for i in range(rows)]
    table = pa.table({"image": pa.array(images, IMAGE),
                      "question": ["Which object differs from the others?"] * rows,
                      "image_id": [f"img-{i}" for i in range(rows)]})
    pq.write_table(table, path, row_group_size=rows, write_batch_size=page_rows,
                   data_page_size=1, compression="snappy")


def largest_page(path: Path) -> int:
    """The largest page (decompressed) of the file's image column, from its headers."""
    from visioneval.io import pagestream

    handle = pq.ParquetFile(path)
    leaf = next(i for i in range(len(handle.schema))
                if handle.schema.column(i).path == "image.bytes")
    return max(h.uncompressed_size
               for g in range(handle.metadata.num_row_groups)
               for h in pagestream.page_headers(
                   path, *pagestream.chunk_span(handle.metadata, g, leaf)))


def choice(path: Path) -> tuple[str, float]:
    """The reader `iter_rows` picks for the file's image column, and the µs that took."""
    from visioneval.io import parquet

    handle = pq.ParquetFile(path)
    times, streamed = [], set()
    for _ in range(5):
        started = time.perf_counter()
        streamed = parquet.streamed_leaves(path, handle, 0)
        times.append(time.perf_counter() - started)
    return ("streamed" if streamed else "pyarrow"), min(times) * 1e6


def read(path: Path, mode: str, columns: list[str] = COLUMNS) -> tuple[int, int, float, float]:
    out = subprocess.run([sys.executable, "-c", READER, str(path), mode,
                          *columns], env=ENV, check=True, capture_output=True, text=True)
    rows, size, cpu, added = out.stdout.split()
    return int(rows), int(size), float(cpu), float(added)


def measure(path: Path, mode: str, repeat: int) -> tuple[float, float, float]:
    """(µs of CPU per row, ms of CPU per MB, MB of peak RSS added), over `repeat` runs."""
    runs = [read(path, mode) for _ in range(repeat)]
    rows, size = runs[0][0], runs[0][1]
    cpu = min(r[2] for r in runs)
    return cpu / rows * 1e6, cpu / (size / 1e6) * 1e3, statistics.median(r[3] for r in runs)


def dataset(folder: Path, repeat: int) -> None:
    """CPU per row (best of `repeat`) and peak MB added of `iter_rows` over every column of
    each parquet file under `folder`, with each reader and with the default choice."""
    print("| file | rows | pyarrow: µs/row | streamed: µs/row | default: µs/row "
          "| pyarrow / streamed / default: peak MB added |\n|---|---:|---:|---:|---:|---|")
    for path in sorted(folder.rglob("*.parquet")):
        columns = pq.ParquetFile(path).schema_arrow.names
        got = {}
        for mode in ("pyarrow", "streamed", "default"):
            runs = [read(path, mode, columns) for _ in range(repeat)]
            got[mode] = (min(r[2] for r in runs) / runs[0][0] * 1e6,
                         statistics.median(r[3] for r in runs))
        rows = pq.ParquetFile(path).metadata.num_rows
        print(f"| {path.name} | {rows} | " + " | ".join(f"{got[m][0]:.1f}" for m in got)
              + " | " + " / ".join(f"{got[m][1]:.0f}" for m in got) + " |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="only the image size with this label")
    parser.add_argument("--data", type=Path, help="measure the parquet files under this "
                        "folder (every column) instead of the page-size sweep")
    args = parser.parse_args()
    if args.data:
        dataset(args.data, args.repeat)
        return
    print(f"pyarrow {pa.__version__}; best CPU of {args.repeat}, median memory",
          file=sys.stderr)
    lines = ["| image | rows per page | largest page MB | pyarrow: µs/row | streamed: µs/row "
             "| pyarrow: ms/MB | streamed: ms/MB | pyarrow: peak MB added "
             "| streamed: peak MB added | default | choice µs |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        for label, image_bytes, rows, pages in CASES:
            if args.only and args.only != label:
                continue
            for page_rows in pages:
                path = Path(tmp) / f"{label}-{page_rows}.parquet"
                write_file(path, image_bytes, rows, page_rows)
                page = largest_page(path) / 1e6
                arrow = measure(path, "pyarrow", args.repeat)
                stream = measure(path, "streamed", args.repeat)
                picked, cost = choice(path)
                lines.append(f"| {label} | {page_rows} | {page:.2f} | {arrow[0]:.1f} | "
                             f"{stream[0]:.1f} | {arrow[1]:.2f} | {stream[1]:.2f} | "
                             f"{arrow[2]:.0f} | {stream[2]:.0f} | {picked} | {cost:.0f} |")
                print(lines[-1], file=sys.stderr)
                path.unlink()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
