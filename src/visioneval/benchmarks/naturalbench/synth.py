"""A small NaturalBench-shaped dataset for tests and offline runs.

`write_synthetic(out_dir, n, seed, layout_breaks)` writes `out_dir/data/train-00000-of-00001
.parquet` with the Hub's columns and types: `Index` (int64), `Image_0` and `Image_1` (HF
Image structs), `Question_0`, the two answers to it, `Question_1`, the two answers to it,
`Question_Type` and `Source` (strings). Each group is made as the real ones are: two images
that differ in one attribute, and two questions, each true of one image, so that the answer
columns read Yes/No/No/Yes (or A/B/B/A for a multiple-choice group, written as the real
ones: "...?\nOption: A:red; B:blue;"). About one group in four is multiple choice.

`layout_breaks` K: the last K groups have their two images swapped, so their answer
columns read No/Yes/Yes/No (B/A/A/B) and break the fixed layout the scoring code assumes;
the real data has none (see docs/naturalbench.md), the option exercises the check.

Images are 64x64 PNGs of a coloured shape on grey: valid images, nothing more."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw

SIZE = 64
COLOURS = {"red": (200, 40, 40), "blue": (40, 70, 200), "green": (40, 150, 60),
           "yellow": (220, 200, 40), "purple": (130, 50, 160), "orange": (230, 130, 30)}
SHAPES = ("circle", "square", "triangle")
IMAGE_COLUMNS = ("Image_0", "Image_1")
COLUMN_ORDER = ("Index", "Image_0", "Image_1", "Question_0", "Image_0_Question_0",
                "Image_1_Question_0", "Question_1", "Image_0_Question_1",
                "Image_1_Question_1", "Question_Type", "Source")


def render(shape: str, colour: tuple[int, int, int], rng: np.random.Generator) -> bytes:
    image = Image.new("RGB", (SIZE, SIZE), (128, 128, 128))
    draw = ImageDraw.Draw(image)
    x, y = (int(v) for v in rng.integers(14, SIZE - 14, 2))
    box = (x - 12, y - 12, x + 12, y + 12)
    if shape == "circle":
        draw.ellipse(box, fill=colour)
    elif shape == "square":
        draw.rectangle(box, fill=colour)
    else:
        draw.polygon([(x, y - 12), (x - 12, y + 12), (x + 12, y + 12)], fill=colour)
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def make_row(i: int, seed: int, swap: bool) -> dict:
    rng = np.random.default_rng((seed, i))
    shape = SHAPES[int(rng.integers(len(SHAPES)))]
    first, second = (str(c) for c in rng.choice(list(COLOURS), 2, replace=False))
    images = [render(shape, COLOURS[first], rng), render(shape, COLOURS[second], rng)]
    mcq = i % 4 == 3
    if mcq:
        q0 = f"What colour is the {shape}?\nOption: A:{first}; B:{second};"
        q1 = f"What colour is the {shape}?\nOption: A:{second}; B:{first};"
        yes, no = "A", "B"
    else:
        q0, q1 = f"Is the {shape} {first}?", f"Is the {shape} {second}?"
        yes, no = "Yes", "No"
    answers = [yes, no, no, yes]  # q0 on i0, q0 on i1, q1 on i0, q1 on i1
    if swap:
        images.reverse()
        answers = [no, yes, yes, no]
    return {"Index": i,
            "Image_0": {"bytes": images[0], "path": f"{i:04d}_0.png"},
            "Image_1": {"bytes": images[1], "path": f"{i:04d}_1.png"},
            "Question_0": q0, "Image_0_Question_0": answers[0],
            "Image_1_Question_0": answers[1], "Question_1": q1,
            "Image_0_Question_1": answers[2], "Image_1_Question_1": answers[3],
            "Question_Type": "multiple_choice" if mcq else "yes_no", "Source": "synthetic"}


def schema() -> pa.Schema:
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    fields = [pa.field(c, pa.int64() if c == "Index" else
                       image if c in IMAGE_COLUMNS else pa.string()) for c in COLUMN_ORDER]
    features = {c: {"dtype": "int64", "_type": "Value"} if c == "Index" else
                {"_type": "Image"} if c in IMAGE_COLUMNS else
                {"dtype": "string", "_type": "Value"} for c in COLUMN_ORDER}
    return pa.schema(fields, metadata={b"huggingface": json.dumps(
        {"info": {"features": features}}).encode()})


def write_synthetic(out_dir: Path, n: int, seed: int = 0, layout_breaks: int = 0) -> Path:
    """Write n groups; the same arguments give the same bytes. Returns the file."""
    if n < 1:
        raise ValueError("n must be >= 1")
    if layout_breaks > n:
        raise ValueError(f"--layout-breaks {layout_breaks} is more than the {n} groups")
    path = Path(out_dir) / "data" / "train-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [make_row(i, seed, swap=i >= n - layout_breaks) for i in range(n)]
    table = pa.Table.from_pylist(rows, schema=schema())
    pq.write_table(table, path, row_group_size=64, write_batch_size=8)
    return path
