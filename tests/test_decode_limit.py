"""Decompression bombs: a small PNG of huge dimensions is refused from its header wherever
visioneval decodes (report thumbnails, the popout baseline, CANVAS pixel metrics), with one
line naming the sample or file, and memory stays low. Models are still sent the stored
bytes: only decoding is refused."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import textwrap
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import invoke, journal
from helpers import png_bytes
from layout_fixtures import MODEL, VARIANT, folder, write_fixture
from layout_fixtures import invoke as layout
from layout_fixtures import load as layout_results

from visioneval.baselines import popout
from visioneval.benchmarks.salbench.synth import write_synthetic
from visioneval.canvas.pairs import collect_pairs
from visioneval.canvas.pipeline import evaluate_pair
from visioneval.core import registry
from visioneval.core.store import RunStore
from visioneval.io.images import MAX_DECODE_PIXELS, Image, ImageError, TooManyPixels, open_to_decode
from visioneval.report.thumbsource import ThumbSource

BIG = (8000, 6000)  # 48 Mpx: past visioneval's limit, under Pillow's own warning (89 Mpx)
BOMB = (20000, 10000)  # 200 Mpx: past Pillow's own limit too
BIG_LINE = "8000x6000 pixels (48 Mpx), beyond the 40 Mpx visioneval decodes"
QUESTION = ("Context: Given this list of low level visual features defined according to "
            "feature integration theory: Orientation, Color, Size. Task: which feature makes "
            "one object different?")


def huge_png(width: int, height: int) -> bytes:
    """A valid 1-bit greyscale PNG, all black, written row by row: a few kB for any size,
    and never decoded here."""
    row = b"\0" * (1 + (width + 7) // 8)  # filter byte, then the packed bits
    packer = zlib.compressobj(9)
    idat = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat)
            + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def big() -> bytes:
    data = huge_png(*BIG)
    assert len(data) < 100_000
    return data


def traced_peak(action: Callable[[], object]) -> int:
    """Peak bytes Python and numpy allocated during `action` (numpy reports its arrays to
    tracemalloc; Pillow's own buffers are measured by `child_peak_kb` instead)."""
    tracemalloc.start()
    try:
        action()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_the_header_decides_before_any_decode(big):
    with pytest.raises(TooManyPixels, match=re.escape(f"sample s1: {BIG_LINE}")):
        open_to_decode(big, "sample s1")
    bomb = huge_png(*BOMB)
    with pytest.raises(TooManyPixels, match="^x.png: 200 Mpx, beyond the 40 Mpx visioneval"):
        open_to_decode(bomb, "x.png")  # Pillow's own refusal, said in the same words
    with open_to_decode(huge_png(6000, 6000)) as fine:  # 36 Mpx: opened, not decoded here
        assert fine.size == (6000, 6000)
    # Sent to models as stored: the sample reader only reads the header.
    assert Image.from_bytes(big).width == 8000
    with pytest.raises(ImageError, match="^image/png of 200 Mpx, beyond Pillow's "
                                         "decompression-bomb limit$"):
        Image.from_bytes(bomb)


def test_pillow_s_own_warning_is_not_printed_beside_the_line_that_says_it():
    """Between Pillow's warning (89 Mpx) and its error (178 Mpx): visioneval's line alone."""
    import warnings

    from PIL import Image as PILImage

    middle = huge_png(10000, 10000)  # 100 Mpx
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert Image.from_bytes(middle).width == 10000  # sent as stored
        with pytest.raises(TooManyPixels, match="100 Mpx"):
            open_to_decode(middle, "sample s1")
        with pytest.raises(TooManyPixels, match="popout's image: 10000x10000"):
            popout.answer(QUESTION, middle)
    assert not [w for w in caught if issubclass(w.category, PILImage.DecompressionBombWarning)]


@pytest.mark.slow
def test_popout_refuses_without_decoding(big):
    def refused() -> None:
        with pytest.raises(TooManyPixels, match=re.escape(f"popout's image: {BIG_LINE}")):
            popout.answer(QUESTION, big)

    control = png_bytes(size=(2000, 2000))
    popout.answer(QUESTION, png_bytes())  # its imports, before memory is traced
    assert traced_peak(refused) < 2_000_000
    # The measure sees a decode: a 2000x2000 image (within the limit) costs tens of MB.
    assert traced_peak(lambda: popout.answer(QUESTION, control)) > 20_000_000


CHILD = textwrap.dedent("""
    import sys
    from visioneval.report.thumbs import webp

    def kb(field):
        status = open("/proc/self/status").read()
        return int(status.split(field + ":")[1].split()[0])

    data = open(sys.argv[1], "rb").read()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # the peak (VmHWM) starts again from the current size
    before = kb("VmRSS")
    try:
        webp(data, name="sample s1")
        print("made")
    except ValueError as exc:
        print(exc)
    print(kb("VmHWM") - before)
""")


def child_peak_kb(image: Path) -> tuple[str, int]:
    """A thumbnail made in a fresh process: (its outcome, how far its peak resident size
    rose above its size before, kB; Linux's /proc)."""
    proc = subprocess.run([sys.executable, "-c", CHILD, str(image)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    outcome, grown = proc.stdout.strip().splitlines()
    return outcome, int(grown)


@pytest.mark.slow
def test_a_thumbnail_of_a_huge_image_costs_no_memory(big, tmp_path):
    (tmp_path / "big.png").write_bytes(big)
    outcome, grown = child_peak_kb(tmp_path / "big.png")
    assert outcome == f"sample s1: {BIG_LINE}"
    assert grown < 20_000  # kB
    # The measure sees a decode: 36 Mpx (within the limit) takes well over 100 MB.
    (tmp_path / "fine.png").write_bytes(huge_png(6000, 6000))
    outcome, grown = child_peak_kb(tmp_path / "fine.png")
    assert outcome == "made" and grown > 100_000


def test_the_report_skips_that_thumbnail_with_a_note(big, tmp_path):
    data = tmp_path / "d"
    (data / "img").mkdir(parents=True)
    (data / "img" / "small.png").write_bytes(png_bytes())
    (data / "img" / "big.png").write_bytes(big)
    rows = [{"id": name, "image": f"img/{name}.png", "question": "Which?", "answer": "A",
             "choices": ["x", "y"]} for name in ("small", "big")]
    (data / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    result = invoke("vqa", "--data", data / "q.jsonl", "--scorer", "choice", "--backend",
                    "builtin", "--model", "random", "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    # Both samples were answered: the model got the stored bytes, whatever their size.
    assert {r["id"]: r["response"]["error"] for r in journal(out)} == {"small": None,
                                                                      "big": None}
    assert f"warning: no thumbnail for sample big: {BIG_LINE}" in result.stderr
    page = (out / "report.html").read_text()
    assert f"No thumbnail for sample big: {BIG_LINE}." in page
    # `visioneval view`'s thumbnails: the same refusal, and its reason on the 404.
    big_sha = Image.from_bytes(big).sha256
    info = RunStore.open(out).info
    source = ThumbSource(registry.for_run(info), info,
                         {big_sha, Image.from_bytes(png_bytes()).sha256})
    assert source.get(big_sha) is None
    assert source.refused[big_sha] == f"no thumbnail for sample big: {BIG_LINE}"
    assert source.get(Image.from_bytes(png_bytes()).sha256) is not None


def salbench_with_big_image(tmp_path: Path, big: bytes) -> Path:
    """Two synthetic P3 rows, the first with the huge PNG as its image."""
    root = tmp_path / "salbench"
    write_synthetic(root, 2, seed=3)
    for config in ("P3_box", "P3_box_img"):
        shutil.rmtree(root / config)
    shard = root / "P3" / "shard_00000.parquet"
    table = pq.read_table(shard)
    images = table.column("image").to_pylist()
    images[0] = {"bytes": big, "path": images[0]["path"]}
    column = pa.array(images, table.schema.field("image").type)
    table = table.set_column(table.schema.get_field_index("image"), "image", column)
    pq.write_table(table, shard)
    return root


@pytest.mark.slow
def test_a_popout_run_makes_the_sample_an_error(big, tmp_path):
    root = salbench_with_big_image(tmp_path, big)
    out = tmp_path / "run"
    result = invoke("salbench", "--backend", "builtin", "--model", "popout", "--data-dir", root,
                    "--configs", "P3", "--out", out, "--no-progress", "--no-report")
    assert result.exit_code == 1  # a failed sample, named, not a crash
    records = journal(out)
    failed = [r for r in records if r["response"]["error"]]
    assert len(records) == 2 and len(failed) == 1
    sha = Image.from_bytes(big).sha256
    assert failed[0]["response"]["error"] == (
        f"failed after 1 attempt(s): popout does not decode image {sha[:12]}: {BIG_LINE}")
    assert failed[0]["prompt"][0]["parts"][0]["image"]["sha256"] == sha
    assert "popout does not decode image" in result.stderr


def test_the_loopback_server_refuses_it_as_a_model_server_would(big, serve, tmp_path):
    """`visioneval loopback --answer popout`: HTTP 400 naming the image, not a 500."""
    from visioneval.loopback.server import answer_popout

    server = serve(answer=answer_popout)
    root = salbench_with_big_image(tmp_path, big)
    out = tmp_path / "run"
    result = invoke("salbench", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data-dir", root, "--configs", "P3", "--samples", "1",
                    "--out", out, "--no-progress", "--no-report", "--backoff-base", "0.01")
    assert result.exit_code == 1
    [record] = journal(out)
    assert record["response"]["error"].startswith("failed after 1 attempt(s): HTTP 400")
    assert f"popout's image: {BIG_LINE}" in record["response"]["error"]


def huge_render(tmp_path: Path, big: bytes) -> tuple[Path, Path]:
    """A CANVAS folder whose ex1 generated render is the huge PNG: (base, that file)."""
    base = write_fixture(tmp_path / "canvas")
    gen = folder(base, "ex1") / f"ex1-{MODEL}-{VARIANT}.png"
    gen.write_bytes(big)
    assert BIG[0] * BIG[1] > MAX_DECODE_PIXELS and os.path.getsize(gen) < 100_000
    return base, gen


def test_layout_pixel_metrics_refuse_the_render(big, tmp_path):
    base, gen = huge_render(tmp_path, big)
    pairs, _ = collect_pairs(base, MODEL, VARIANT)
    pair = next(p for p in pairs if p.id == "ex1")
    assert pair.gen_image == gen
    evaluate_pair(pair)  # its imports, before memory is traced
    sample: dict = {}
    peak = traced_peak(lambda: sample.update(evaluate_pair(pair)))
    assert sample["pixel_fidelity_error"] == f"{gen}: {BIG_LINE}"
    assert "mean_iou" in sample  # the other families still computed
    assert peak < 20_000_000


@pytest.mark.slow
def test_the_layout_command_prints_the_line(big, tmp_path):
    base, gen = huge_render(tmp_path, big)
    out = tmp_path / "res.json"
    result = layout("--base_dir", base, "--out", out, "--workers", 1, "--no-progress")
    assert result.exit_code == 1
    assert f"error: {VARIANT}/ex1 (pixel_fidelity): {gen}: {BIG_LINE}" in result.stderr
    sample = {s["id"]: s for s in layout_results(out)["samples"]}["ex1"]
    assert sample["pixel_fidelity_error"] == f"{gen}: {BIG_LINE}"
