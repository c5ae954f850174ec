"""Speed of the streaming page decoders (`snappystream`, and gzip through zlib) against
pyarrow's whole-buffer codecs, on incompressible image data and on compressible data.

`pagestream` streams a page only when it is over `Budget().whole_page` (4 MiB); smaller
pages go through pyarrow's codecs whole. Inputs: 16 noise PNGs (648 px, ~1.26 MB each, as
in big_images_memory.py: snappy emits long literals) and 20 MB of repetitive text (short
copies). Each figure is the best of `--repeat` passes, in MB/s of uncompressed output.

    uv run python benchmarks/page_decoders.py

Results go to stdout as a Markdown table; docs/PERFORMANCE.md records them.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
import zlib
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from visioneval.benchmarks import pagestream, snappystream

CHUNK = pagestream.Budget().read_chunk


def noise_pngs(n: int, side: int = 648) -> bytes:
    from PIL import Image

    rng = np.random.default_rng(0)
    out = []
    for _ in range(n):
        buf = io.BytesIO()
        pixels = rng.integers(0, 256, size=(side, side, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(buf, format="PNG", compress_level=1)
        out.append(buf.getvalue())
    return b"".join(out)


def text(size: int) -> bytes:
    rng = np.random.default_rng(1)
    words = [b"which", b"colour", b"is", b"the", b"odd", b"one", b"out", b"red", b"green",
             b"blue", b"answer:", b"question", b"\n"]
    picks = rng.integers(0, len(words), size=size // 4)
    return b" ".join(words[i] for i in picks)[:size]


def chunked(data: bytes) -> list[bytes]:
    return [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)]


def best_rate(size: int, decode: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        decode()
        best = min(best, time.perf_counter() - started)
    return size / best / 1e6


def gunzip_stream(chunks: list[bytes]) -> int:
    inflater = zlib.decompressobj(wbits=47)
    total = 0
    for chunk in chunks:
        data = chunk
        while data:
            total += len(inflater.decompress(data, CHUNK))
            data = inflater.unconsumed_tail
    return total


def measure(data: bytes, repeat: int) -> tuple[int, bytes, bytes, list[float]]:
    """MB/s of: the snappy stream, pyarrow's snappy, the gzip stream, pyarrow's gzip."""
    size = len(data)
    snappy = pa.compress(data, codec="snappy", asbytes=True)
    gzip = pa.compress(data, codec="gzip", asbytes=True)
    snappy_chunks, gzip_chunks = chunked(snappy), chunked(gzip)
    assert b"".join(snappystream.decompress(snappy_chunks, size)) == data
    assert gunzip_stream(gzip_chunks) == size
    rates = [
        best_rate(size, lambda: sum(map(len, snappystream.decompress(snappy_chunks, size))),
                  repeat),
        best_rate(size, lambda: pa.decompress(snappy, size, codec="snappy"), repeat),
        best_rate(size, lambda: gunzip_stream(gzip_chunks), repeat),
        best_rate(size, lambda: pa.decompress(gzip, size, codec="gzip"), repeat),
    ]
    return size, snappy, gzip, rates


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    inputs = {"noise PNGs": noise_pngs(16), "repetitive text": text(20_000_000)}
    lines = ["| data | MB | snappy ratio | snappy: stream | snappy: pyarrow whole | "
             "gzip ratio | gzip: stream | gzip: pyarrow whole |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, data in inputs.items():
        size, snappy, gzip, rates = measure(data, args.repeat)
        lines.append(f"| {name} | {size / 1e6:.1f} | {size / len(snappy):.2f} | "
                     f"{rates[0]:.0f} | {rates[1]:.0f} | {size / len(gzip):.2f} | "
                     f"{rates[2]:.0f} | {rates[3]:.0f} |")
        print(lines[-1], file=sys.stderr)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
