"""Speed of the streaming page decoders `pagestream` uses (`snappystream`; gzip through
zlib; zstd through pyarrow's CompressedInputStream) against pyarrow's whole-buffer codecs,
on incompressible image data and on compressible data.

`pagestream` streams a page only when it is over `Budget().whole_page` (4 MiB); smaller
pages go through pyarrow's codecs whole. Inputs: 16 noise PNGs (648 px, ~1.26 MB each, as
in big_images_memory.py: snappy emits long literals) and 20 MB of repetitive text (short
copies). Each figure is the best of `--repeat` passes, in MB/s of uncompressed output.

    uv run python measure/page_decoders.py

Results go to stdout as a Markdown table; docs/PERFORMANCE.md records them.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from visioneval.io import pagestream, snappystream

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


def measure(data: bytes, repeat: int) -> list[str]:
    """Ratio, streamed MB/s and pyarrow-whole MB/s for each codec `pagestream` streams,
    through the functions it uses."""
    size = len(data)
    cells = []
    for codec in ("snappy", "gzip", "zstd"):
        packed = pa.compress(data, codec=codec, asbytes=True)
        chunks = chunked(packed)

        def stream(codec: str = codec, chunks: list[bytes] = chunks) -> int:
            if codec == "snappy":
                pieces = snappystream.decompress(chunks, size)
            elif codec == "gzip":
                pieces = pagestream._gunzip(iter(chunks), size, CHUNK)
            else:
                pieces = pagestream._arrow_stream(iter(chunks), codec.upper(), size, CHUNK)
            return sum(map(len, pieces))

        assert stream() == size
        whole = best_rate(size, lambda c=codec, p=packed: pa.decompress(p, size, codec=c),
                          repeat)
        cells += [f"{size / len(packed):.2f}", f"{best_rate(size, stream, repeat):.0f}",
                  f"{whole:.0f}"]
    return cells


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    inputs = {"noise PNGs": noise_pngs(16), "repetitive text": text(20_000_000)}
    head = " | ".join(f"{c} ratio | {c}: stream | {c}: pyarrow whole"
                      for c in ("snappy", "gzip", "zstd"))
    lines = [f"| data | MB | {head} |", "|---|---:|" + "---:|" * 9]
    for name, data in inputs.items():
        lines.append(f"| {name} | {len(data) / 1e6:.1f} | "
                     + " | ".join(measure(data, args.repeat)) + " |")
        print(lines[-1], file=sys.stderr)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
