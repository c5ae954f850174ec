"""The report's thumbnails look right: a 96-pixel WebP of the image (aspect kept, colours
where they were), whatever the format and mode, and a report's set of them is the one its
images call for, in the page's order, however many threads made them and whether they were
made while the run went on or read from the data after it."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from cli_helpers import invoke
from PIL import Image as PILImage

from visioneval.benchmarks.salbench.synth import write_synthetic
from visioneval.core.rundir import load
from visioneval.io.images import Image
from visioneval.io.parquet import image_bytes, iter_rows, parquet_files
from visioneval.report import thumbs


def halves(width: int, height: int, mode: str) -> PILImage.Image:
    """Left half red, right half blue."""
    pixels = np.zeros((height, width, 3), dtype=np.uint8)
    pixels[:, : width // 2] = (220, 20, 20)
    pixels[:, width // 2:] = (20, 20, 220)
    image = PILImage.fromarray(pixels)
    return image.convert(mode) if mode != "RGB" else image


def encoded(image: PILImage.Image, fmt: str) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format=fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return buf.getvalue()


@pytest.mark.parametrize(("size", "mode", "fmt", "expected"), [
    ((768, 768), "RGB", "PNG", (96, 96)),
    ((768, 768), "RGB", "JPEG", (96, 96)),
    ((768, 512), "RGB", "PNG", (96, 64)),
    ((512, 768), "RGBA", "PNG", (64, 96)),
    ((700, 300), "P", "PNG", (96, 41)),
    ((384, 384), "L", "PNG", (96, 96)),
    ((60, 40), "RGB", "PNG", (60, 40)),  # never enlarged
])
def test_a_thumbnail_is_a_small_webp_of_the_image(size, mode, fmt, expected):
    source = halves(*size, mode)
    thumb = PILImage.open(io.BytesIO(thumbs.webp(encoded(source, fmt))))
    assert thumb.format == "WEBP" and thumb.size == expected
    pixels = np.asarray(thumb.convert("RGB"), dtype=float)
    left, right = pixels[:, : expected[0] // 3], pixels[:, -(expected[0] // 3):]
    reference = np.asarray(source.convert("RGB"), dtype=float)
    for part, whole in ((left, reference[:, : size[0] // 3]),
                        (right, reference[:, -(size[0] // 3):])):
        assert np.abs(part.mean(axis=(0, 1)) - whole.mean(axis=(0, 1))).max() < 25
    url = thumbs.thumbnail(encoded(source, fmt))
    assert url.startswith("data:image/webp;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == thumbs.webp(encoded(source, fmt))


def test_a_reports_thumbnails_are_its_images_in_the_pages_order(tmp_path):
    data = tmp_path / "data"
    write_synthetic(data, 14, seed=4)
    run = tmp_path / "run"
    result = invoke("salbench", "--backend", "builtin", "--model", "random", "--data-dir", data,
                    "--configs", "P3", "--out", run, "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    images = [image_bytes(r.values["image"]) for r in
              iter_rows(parquet_files(data / "P3"), ["image"])]
    shas = [Image.from_bytes(b).sha256 for b in images]
    order = list(reversed(shas))  # the page's order (failures first) is not the data's
    found, note = thumbs.collect(load(run), order, 9)
    wanted = set(order[:9])
    assert list(found) == order[:9]  # the page's order, not the data's
    assert found == {s: thumbs.thumbnail(b, name="x") for s, b in zip(shas, images, strict=True)
                     if s in wanted}  # the threads made what one call makes
    assert note.startswith("Thumbnails for 9 of the 14 images")
