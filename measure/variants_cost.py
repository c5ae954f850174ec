"""What request variants (`--variant`) cost: the CPU to make each variant's image, and
whether making them slows the stored images' requests.

1. Making: `Variant.image` on a 384 px synthetic SalBench PNG, a 1568 x 1176 PNG photo-like
   image and a 2048 x 1536 JPEG (median of `--repeat` calls, ms per image).
2. A run: SalBench P3 synthetic (`--rows`) against a loopback server that answers a fixed
   text (so that its own CPU is not measured) after `--latency` seconds, at `--concurrency`,
   without variants and with blind, jpeg:50 and max-side:192; requests per second and the
   process's CPU seconds per request (run.json), and the stored images' median request
   latency (the records' `latency_s`).

    uv run python measure/variants_cost.py
    uv run python measure/variants_cost.py --rows 200 --latency 0.05 --concurrency 16
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image as PILImage

from visioneval.benchmarks.salbench.synth import write_synthetic
from visioneval.io.images import Image
from visioneval.loopback.server import ServerScript, ThreadedServer, answer_fixed
from visioneval.variants.kinds import parse

VARIANTS = "blind,blank,grayscale,jpeg:90,jpeg:50,scale:0.5,max-side:768,max-side:192"


def _photo(width: int, height: int, fmt: str) -> Image:
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([(x * 255 // width), (y * 255 // height), ((x + y) * 127 // (width + height))],
                    axis=-1)
    noisy = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    PILImage.fromarray(noisy).save(buffer, format=fmt, **({"quality": 90} if fmt == "JPEG"
                                                         else {}))
    return Image.from_bytes(buffer.getvalue())


def making(repeat: int, synth: Path) -> None:
    import pyarrow.parquet as pq

    cell = pq.read_table(next((synth / "P3").glob("*.parquet")), columns=["image"]) \
        .column("image")[0].as_py()
    images = {"384 px PNG (SalBench synthetic)": Image.from_bytes(cell["bytes"]),
              "1568 x 1176 PNG": _photo(1568, 1176, "PNG"),
              "2048 x 1536 JPEG": _photo(2048, 1536, "JPEG")}
    variants = parse([VARIANTS])
    print("| variant | " + " | ".join(images) + " |")
    print("|---|" + "---:|" * len(images))
    for variant in variants:
        cells = []
        for image in images.values():
            times = []
            for _ in range(repeat):
                started = time.perf_counter()
                variant.image(image)
                times.append(time.perf_counter() - started)
            cells.append(f"{1000 * statistics.median(times):.1f}")
        print(f"| {variant.name} | " + " | ".join(cells) + " |")


def run(data: Path, out: Path, url: str, concurrency: int, extra: list[str]) -> dict:
    command = [sys.executable, "-m", "visioneval", "salbench", "--backend", "openai",
               "--base-url", url + "/v1", "--model", "m", "--data-dir", str(data),
               "--configs", "P3", "--out", str(out), "--no-progress", "--no-report",
               "--no-cache", "--concurrency", str(concurrency), *extra]
    subprocess.run(command, check=True, capture_output=True)
    info = json.loads((out / "run.json").read_text())
    session = info["sessions"][-1]
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    stored = [r["response"]["latency_s"] for r in records if "@" not in r["id"]]
    return {"requests": len(records), "seconds": session["seconds"],
            "cpu": session["cpu_seconds"], "stored_latency": statistics.median(stored)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_synthetic(root / "data", args.rows, seed=1)
        print("Making each variant's image (ms, median):\n")
        making(args.repeat, root / "data")
        print(f"\nA run of {args.rows} P3 rows, {args.latency * 1000:.0f} ms per answer, "
              f"concurrency {args.concurrency}:\n")
        print("| variants | requests | requests/s | CPU ms per request | stored images' "
              "median latency (ms) |")
        print("|---|---:|---:|---:|---:|")
        script = ServerScript(answer=answer_fixed("Color"), latency_s=args.latency)
        with ThreadedServer(script) as server:
            for label, extra in (("none", []),
                                 ("blind, jpeg:50, max-side:192",
                                  ["--variant", "blind,jpeg:50,max-side:192"])):
                found = run(root / "data", root / label.replace(" ", ""), server.base_url,
                            args.concurrency, extra)
                print(f"| {label} | {found['requests']} | "
                      f"{found['requests'] / found['seconds']:.0f} | "
                      f"{1000 * found['cpu'] / found['requests']:.2f} | "
                      f"{1000 * found['stored_latency']:.0f} |")


if __name__ == "__main__":
    main()
