"""A small CV-Bench-shaped dataset for tests and offline runs.

`write_synthetic(out_dir, n, seed)` writes `out_dir/test.parquet` (the Hub's config
`default` file) with the Hub's columns and types: `idx` (int64), `type`, `task`, `image` (an
HF Image struct), `question`, `choices` (list of strings), `answer` ("(A)"...), `prompt`
(the question, "Select from the following choices." and one "(A) ..." line per option),
`filename`, `source`, `source_dataset`, `source_filename`. Items are made as the real ones
are: two questions per image (Count and Relation on an ADE20K or COCO scene, Depth and
Distance on an Omni3D scene), so intervals resample images; Count has 4 or 6 options, the
others 2. Images are 64x64 PNGs of coloured discs on grey: valid images, nothing more."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw

SIZE = 64
OBJECTS = ("chair", "lamp", "car", "person", "table", "plant")
SCENE_SOURCES = ("ADE20K", "COCO", "Omni3D")
COLUMN_ORDER = ("idx", "type", "task", "image", "question", "choices", "answer", "prompt",
                "filename", "source", "source_dataset", "source_filename")


def render(count: int, rng: np.random.Generator) -> bytes:
    image = Image.new("RGB", (SIZE, SIZE), (128, 128, 128))
    draw = ImageDraw.Draw(image)
    for _ in range(count):
        x, y = (int(v) for v in rng.integers(6, SIZE - 6, 2))
        colour = tuple(int(c) for c in rng.integers(0, 255, 3))
        draw.ellipse((x - 5, y - 5, x + 5, y + 5), fill=colour)
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def _item(question: str, choices: list[str], right: int) -> dict[str, Any]:
    lines = "\n".join(f"({chr(65 + i)}) {c}" for i, c in enumerate(choices))
    return {"question": question, "choices": choices, "answer": f"({chr(65 + right)})",
            "prompt": f"{question} Select from the following choices.\n{lines}"}


def scene_items(scene: int, seed: int) -> list[dict[str, Any]]:
    """The two items asked about one image."""
    rng = np.random.default_rng((seed, scene))
    source = SCENE_SOURCES[scene % 3]
    first, second = (str(o) for o in rng.choice(OBJECTS, 2, replace=False))
    count = int(rng.integers(1, 5))
    data = render(count, rng)
    if source == "Omni3D":
        near = int(rng.integers(2))
        questions = [
            ("3D", "Depth", _item(f"Which is closer to the camera, the {first} or the "
                                  f"{second}?", [first, second], near)),
            ("3D", "Distance", _item(f"Which is closer to the {first}, the {second} or the "
                                     "lamp?", [second, "lamp"], int(rng.integers(2))))]
    else:
        options = 4 if scene % 2 else 6
        counts = [str(c) for c in range(options)]
        side = int(rng.integers(2))
        questions = [
            ("2D", "Count", _item(f"How many {first}s are in the image?", counts,
                                  min(count, options - 1))),
            ("2D", "Relation", _item(f"Where is the {first} relative to the {second}?",
                                     ["left", "right"], side))]
    name = f"img/{questions[0][0]}/{scene:06d}.png"
    return [{"type": kind, "task": task, "image": {"bytes": data, "path": name},
             **item, "filename": name, "source": source,
             "source_dataset": f"{source} (synthetic)", "source_filename": f"{scene}.png"}
            for kind, task, item in questions]


def schema() -> pa.Schema:
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    types = {"idx": pa.int64(), "image": image, "choices": pa.list_(pa.string())}
    fields = [pa.field(c, types.get(c, pa.string())) for c in COLUMN_ORDER]
    features = {c: {"dtype": "int64", "_type": "Value"} if c == "idx" else
                {"_type": "Image"} if c == "image" else
                {"feature": {"dtype": "string", "_type": "Value"}, "_type": "Sequence"}
                if c == "choices" else {"dtype": "string", "_type": "Value"}
                for c in COLUMN_ORDER}
    return pa.schema(fields, metadata={b"huggingface": json.dumps(
        {"info": {"features": features}}).encode()})


def write_synthetic(out_dir: Path, n: int, seed: int = 0) -> Path:
    """Write n items (two per image); the same arguments give the same bytes. Returns the
    file."""
    if n < 1:
        raise ValueError("n must be >= 1")
    path = Path(out_dir) / "test.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(path, schema()) as writer:
        batch: list[dict[str, Any]] = []
        for idx in range(n):
            if idx % 2 == 0:
                pair = scene_items(idx // 2, seed)
            batch.append({"idx": idx, **pair[idx % 2]})
            if len(batch) == 256 or idx == n - 1:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema()))
                batch = []
    return path
