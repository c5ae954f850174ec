"""What the checks on image files named by a data file cost per sample (`visioneval vqa`,
`visioneval evaluate`): the folder check (`images.outside`, symlinks resolved) and the
guarded read (`images.read_file`: stat, non-blocking open, fstat, bounded read) against
the plain `Path.read_bytes()` they replace, each followed by `Image.from_bytes` as a
sample is made; the data file's folder is resolved once, as `Vqa` does per data file. Best
of 5 passes over the same 2,000 files (the page cache is warm).

    uv run python measure/image_file_checks.py
"""

from __future__ import annotations

import io
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PIL import Image as PILImage

from visioneval.benchmarks.vqa.data import read_image
from visioneval.io.images import Image

FILES = 2000


def write_images(folder: Path, side: int) -> list[str]:
    """FILES PNG files of side x side pixels (noise-free gradients, a realistic size)."""
    (folder / "img").mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    PILImage.linear_gradient("L").resize((side, side)).convert("RGB").save(buf, "PNG")
    names = []
    for i in range(FILES):
        name = f"img/{side}-{i}.png"
        (folder / name).write_bytes(buf.getvalue())
        names.append(name)
    return names


def best(action: Callable[[], None], passes: int = 5) -> float:
    times = []
    for _ in range(passes):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "data"
        real = folder.resolve()
        print("| image | bytes | read_bytes + from_bytes us | read_image us | difference us |")
        print("|---|---:|---:|---:|---:|")
        for side in (64, 384, 1024):
            names = write_images(folder, side)
            size = (folder / names[0]).stat().st_size

            def plain(names: list[str] = names) -> None:
                for name in names:
                    Image.from_bytes((folder / name).read_bytes())

            def checked(names: list[str] = names) -> None:  # as `Vqa._sample` calls it
                for name in names:
                    read_image(name, folder, False, real)

            a, b = best(plain) / FILES * 1e6, best(checked) / FILES * 1e6
            print(f"| {side}x{side} PNG | {size:,} | {a:.1f} | {b:.1f} | {b - a:+.1f} |")


if __name__ == "__main__":
    main()
