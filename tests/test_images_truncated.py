"""An image cut short (header intact) is caught when its row is read, from its last bytes
alone, and the row is skipped with its line instead of being sent and scored."""

from __future__ import annotations

import io
import random

import pytest
from cli_helpers import invoke, journal, salbench_args
from PIL import Image as PILImage

from visioneval.io.images import Image, ImageError
from visioneval.io.parquet import write_hf_parquet

QUESTION = ("Context: Given this list of low level visual features defined according to feature "
            "integration theory: Orientation, Color, Size. Task: Examine this image and identify "
            "the feature that makes one object notably different from the others. Answer the "
            "question using a single word or phrase.")


def encoded(fmt: str, size=(64, 48)) -> bytes:
    """A noisy picture (so the compressed data is long) in `fmt`."""
    rng = random.Random(7)
    im = PILImage.new("RGB", size)
    im.putdata([(rng.randrange(256), rng.randrange(256), rng.randrange(256))
                for _ in range(size[0] * size[1])])
    buf = io.BytesIO()
    im.save(buf, format=fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return buf.getvalue()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
def test_whole_images_pass_and_halves_are_refused(fmt):
    data = encoded(fmt)
    image = Image.from_bytes(data)
    assert (image.width, image.height) == (64, 48)
    # Pillow already refuses half a WebP header; the RIFF size catches the rest.
    why = "truncated|corrupt image/webp" if fmt == "WEBP" else "truncated"
    with pytest.raises(ImageError, match=why):
        Image.from_bytes(data[: len(data) // 2])
    with pytest.raises(ImageError, match="truncated"):
        Image.from_bytes(data[:-3])


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF"])
def test_a_few_padding_bytes_after_the_end_marker_are_tolerated(fmt):
    data = encoded(fmt) + b"\0" * 16
    assert Image.from_bytes(data).width == 64


def test_truncated_rows_are_skipped_not_sent(serve, tmp_path):
    png, jpeg = encoded("PNG"), encoded("JPEG")
    rows = [
        {"image": {"bytes": png, "path": "a.png"}, "question": QUESTION, "answer": "color",
         "image_id": "whole-png"},
        {"image": {"bytes": png[: len(png) // 2], "path": "b.png"}, "question": QUESTION,
         "answer": "color", "image_id": "half-png"},
        {"image": {"bytes": jpeg, "path": "c.jpg"}, "question": QUESTION, "answer": "size",
         "image_id": "whole-jpeg"},
        {"image": {"bytes": jpeg[: len(jpeg) // 2], "path": "d.jpg"}, "question": QUESTION,
         "answer": "size", "image_id": "half-jpeg"},
    ]
    write_hf_parquet(tmp_path / "data" / "P3" / "test-00000.parquet", rows, ["image"])
    server = serve()
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, tmp_path / "data", out, "--configs", "P3",
                                   "--no-cache"))
    assert result.exit_code == 0, result.output
    skipped = [ln for ln in result.stderr.splitlines() if "skipped" in ln]
    assert len(skipped) == 2
    assert any("half-png" in ln and "truncated image/png data" in ln and "IEND" in ln
               for ln in skipped), skipped
    assert any("half-jpeg" in ln and "truncated image/jpeg data" in ln and "EOI" in ln
               for ln in skipped), skipped
    assert {r["id"] for r in journal(out)} == {"P3/whole-png", "P3/whole-jpeg"}
    assert server.stats.requests == 2
