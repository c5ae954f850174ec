"""A small BLINK-shaped dataset for tests and offline runs, in the Hub's layout.

`write_synthetic(out, total, seed)` writes `<Task>/val-00000-of-00001.parquet` for each of the
14 tasks, `total` questions in the val split's proportions, with BLINK's columns and types
(idx, question, sub_task, image_1 ... image_4 as HF Image structs, null when unused, choices as
a list of strings, answer "(A)" ..., prompt listing the choices, explanation). Tasks differ as
the real ones do in how many images (1 to 4) and options (2 to 4) a question has; two
consecutive questions of a task share their first image (as questions asked of one picture
would), so the clustered intervals are exercised. Images are 64x64 JPEGs with the question's
number in marks (no two alike but the shared ones); `seed` jitters them and the answers."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw

from visioneval.benchmarks.blink.spec import IMAGE_COLUMNS, TASKS

SIZE = 64
# Per task: (images per question, options per question).
SHAPES = {"Art_Style": (3, 2), "Functional_Correspondence": (2, 4),
          "Multi-view_Reasoning": (2, 2), "Relative_Reflectance": (1, 3),
          "Visual_Correspondence": (2, 4), "Counting": (1, 4), "IQ_Test": (1, 4),
          "Object_Localization": (1, 2), "Semantic_Correspondence": (2, 4),
          "Visual_Similarity": (3, 2), "Forensic_Detection": (4, 4), "Jigsaw": (3, 2),
          "Relative_Depth": (1, 2), "Spatial_Relation": (1, 2)}
OPTIONS = ("the first", "the second", "the third", "the fourth")


def draw(task: int, index: int, image: int, seed: int) -> bytes:
    rng = random.Random(f"{seed}/{task}/{index}/{image}")
    picture = Image.new("RGB", (SIZE, SIZE), (rng.randint(180, 240), 230, 225))
    pen = ImageDraw.Draw(picture)
    for bit in range(10):
        if (task * 64 + index * 4 + image) >> bit & 1:
            pen.rectangle([3 + 6 * bit, 3, 6 + 6 * bit, 6], fill=(60, 60, 60))
    x, y = rng.randint(10, 50), rng.randint(15, 50)
    pen.ellipse([x - 6, y - 6, x + 6, y + 6], fill=(200, 40, 40))
    buf = io.BytesIO()
    picture.save(buf, format="JPEG", quality=85)
    return buf.getvalue()


def rows(task: str, n: int, seed: int) -> list[dict[str, Any]]:
    images, options = SHAPES[task]
    number = TASKS.index(task)
    rng = random.Random(f"{seed}/{task}")
    out = []
    for i in range(1, n + 1):
        choices = [f"{OPTIONS[k]} one" for k in range(options)]
        letter = "ABCD"[rng.randrange(options)]
        question = f"Which is right in {task.replace('_', ' ').lower()} question {i}?"
        listed = "\n".join(f"({'ABCD'[k]}) {c}" for k, c in enumerate(choices))
        row: dict[str, Any] = {
            "idx": f"val_{task}_{i}", "question": question, "sub_task": task.replace("_", " "),
            "choices": choices, "answer": f"({letter})",
            "prompt": f"{question}\nSelect from the following choices.\n{listed}",
            "explanation": ""}
        first = (i + 1) // 2  # questions 2k-1 and 2k share their first image
        for k, column in enumerate(IMAGE_COLUMNS):
            row[column] = None if k >= images else {
                "bytes": draw(number, first if k == 0 else i, k, seed),
                "path": f"{task}_{i}_{k + 1}.jpg"}
        out.append(row)
    return out


def schema() -> pa.Schema:
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    text = ("idx", "question", "sub_task")
    fields = [pa.field(c, pa.string()) for c in text]
    fields += [pa.field(c, image) for c in IMAGE_COLUMNS]
    fields += [pa.field("choices", pa.list_(pa.string())), pa.field("answer", pa.string()),
               pa.field("prompt", pa.string()), pa.field("explanation", pa.string())]
    features: dict[str, Any] = {c: {"dtype": "string", "_type": "Value"} for c in text}
    features |= {c: {"_type": "Image"} for c in IMAGE_COLUMNS}
    features["choices"] = {"feature": {"dtype": "string", "_type": "Value"},
                           "_type": "Sequence"}
    features |= {c: {"dtype": "string", "_type": "Value"}
                 for c in ("answer", "prompt", "explanation")}
    return pa.schema(fields, metadata={b"huggingface": json.dumps(
        {"info": {"features": features}}).encode()})


def split(total: int) -> dict[str, int]:
    """`total` questions over the 14 tasks in the val split's proportions (1,901 gives the
    published counts), at least one each."""
    if total < len(TASKS):
        raise ValueError(f"at least {len(TASKS)} questions: one per task")
    published = json.loads(Path(__file__).with_name("rows.json").read_text())["rows"]
    whole = sum(published.values())
    counts = {t: max(1, total * published[t] // whole) for t in TASKS}
    for task in TASKS:
        if sum(counts.values()) >= total:
            break
        counts[task] += 1
    return counts


def write_synthetic(out: Path, total: int, seed: int = 0) -> dict[str, int]:
    """`total` questions over the 14 tasks (`split`); the same (total, seed) gives the same
    bytes. Returns the questions written per task."""
    counts = split(total)
    for task, n in counts.items():
        path = Path(out) / task / "val-00000-of-00001.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows(task, n, seed), schema=schema()), path,
                       row_group_size=32)
    return counts
