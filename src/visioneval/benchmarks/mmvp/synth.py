"""A small MMVP-shaped dataset for tests and offline runs, in either real layout.

`write_synthetic(out, n, seed, layout)` writes the first n questions (n/2 pairs; Index 1..n):
- "MMVP/MMVP": `Questions.csv` (Index, Question, Options, Correct Answer) beside
  `MMVP Images/<Index>.jpg`, as the authors' Hub copy;
- "lmms-lab-eval/MMVP": `data/train-00000-of-00001.parquet` with the same columns and an HF
  Image struct `image`, lmms-eval's four label changes applied where n reaches them.

Pairs are made as the real ones: two consecutive questions with the same text and options,
the first labelled (a) and the second (b) (as every pair of the published file is), and two
images that differ in what the question asks (an arrow up or down, a red or a blue square,
one dot or two ...). Each image is a 96x96 JPEG with its Index in small marks along the top
(so no two are alike); `--seed` only jitters positions. No model
is expected to read anything from them; they are valid images in the real format."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw

from visioneval.benchmarks.mmvp.options import Layout
from visioneval.benchmarks.mmvp.spec import CSV_COLUMNS, IMAGES_FOLDER, LMMS_EVAL_CHANGES

SIZE = 96

# (question, options, what to draw for (a), for (b)).
TEMPLATES = (
    ("Is the arrow pointing up or down?", "(a) Up (b) Down", "arrow_up", "arrow_down"),
    ("Is the square red or blue?", "(a) Red (b) Blue", "red", "blue"),
    ("Is the dot on the left or the right?", "(a) Left (b) Right", "left", "right"),
    ("How many dots are there in the image?", "(a) 1 (b) 2", "one", "two"),
    ("Is the bar horizontal or vertical?", "(a) Horizontal (b) Vertical", "flat", "upright"),
    ("Is there a circle in the image?", "(a) Yes (b) No", "circle", "nothing"),
)



def question(index: int) -> tuple[str, str, str]:
    """(question, options, label) of synthetic question `index` (1-based)."""
    text, options, _, _ = TEMPLATES[((index + 1) // 2 - 1) % len(TEMPLATES)]
    return text, options, "(a)" if index % 2 else "(b)"


def draw(index: int, seed: int) -> bytes:
    _, _, first, second = TEMPLATES[((index + 1) // 2 - 1) % len(TEMPLATES)]
    kind = first if index % 2 else second
    rng = random.Random(f"{seed}/{index}")
    picture = Image.new("RGB", (SIZE, SIZE), (235, 235, 230))
    pen = ImageDraw.Draw(picture)
    dx, dy = rng.randint(-6, 6), rng.randint(-6, 6)
    c = SIZE // 2
    ink = (40, 40, 40)
    if kind in ("arrow_up", "arrow_down"):
        sign = -1 if kind == "arrow_up" else 1
        pen.polygon([(c + dx - 20, c + dy - 10 * sign), (c + dx + 20, c + dy - 10 * sign),
                     (c + dx, c + dy + 25 * sign)], fill=ink)
    elif kind in ("red", "blue"):
        colour = (200, 40, 40) if kind == "red" else (40, 60, 200)
        pen.rectangle([c + dx - 25, c + dy - 25, c + dx + 25, c + dy + 25], fill=colour)
    elif kind in ("left", "right"):
        x = SIZE // 4 if kind == "left" else 3 * SIZE // 4
        pen.ellipse([x + dx - 10, c + dy - 10, x + dx + 10, c + dy + 10], fill=ink)
    elif kind in ("one", "two"):
        for x in ([c] if kind == "one" else [c - 20, c + 20]):
            pen.ellipse([x + dx - 8, c + dy - 8, x + dx + 8, c + dy + 8], fill=ink)
    elif kind in ("flat", "upright"):
        w, h = (35, 6) if kind == "flat" else (6, 35)
        pen.rectangle([c + dx - w, c + dy - h, c + dx + w, c + dy + h], fill=ink)
    elif kind == "circle":
        pen.ellipse([c + dx - 22, c + dy - 22, c + dx + 22, c + dy + 22], outline=ink, width=4)
    for bit in range(9):  # the Index in binary along the top edge: no two images alike
        if index >> bit & 1:
            pen.rectangle([4 + 6 * bit, 2, 7 + 6 * bit, 5], fill=(90, 90, 90))
    buf = io.BytesIO()
    picture.save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def write_synthetic(out: Path, n: int, seed: int = 0,
                    layout: Layout = "MMVP/MMVP") -> Path:
    """Write n questions (n even: whole pairs); the same (n, seed) gives the same bytes.
    Returns the file holding the questions."""
    if n < 2 or n % 2:
        raise ValueError("n must be an even number of questions, 2 or more (whole pairs)")
    rows: list[dict[str, Any]] = []
    for index in range(1, n + 1):
        text, options, label = question(index)
        if layout == "lmms-lab-eval/MMVP" and index in LMMS_EVAL_CHANGES:
            label = LMMS_EVAL_CHANGES[index][1]
        rows.append({"Index": index, "Question": text, "Options": options,
                     "Correct Answer": label})
    if layout == "lmms-lab-eval/MMVP":
        return write_parquet(Path(out) / "data" / "train-00000-of-00001.parquet", rows, seed)
    folder = Path(out) / IMAGES_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for r in rows:
        (folder / f"{r['Index']}.jpg").write_bytes(draw(int(r["Index"]), seed))
    path = Path(out) / "Questions.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(CSV_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_parquet(path: Path, rows: list[dict[str, Any]], seed: int) -> Path:
    """lmms-lab-eval/MMVP's schema (its dataset card): Index int32, three strings and an HF
    Image struct, with the `huggingface` features metadata `datasets` reads."""
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    schema = pa.schema(
        [pa.field("Index", pa.int32())] + [pa.field(c, pa.string()) for c in CSV_COLUMNS[1:]]
        + [pa.field("image", image)],
        metadata={b"huggingface": json.dumps({"info": {"features": {
            "Index": {"dtype": "int32", "_type": "Value"},
            **{c: {"dtype": "string", "_type": "Value"} for c in CSV_COLUMNS[1:]},
            "image": {"_type": "Image"}}}}).encode()})
    made = [{**r, "image": {"bytes": draw(int(r["Index"]), seed), "path": f"{r['Index']}.jpg"}}
            for r in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(made, schema=schema), path, row_group_size=64,
                   write_batch_size=8)
    return path
