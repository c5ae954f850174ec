"""A small HallusionBench-shaped dataset for tests and offline runs.

`write_synthetic(out_dir, n, seed)` writes `out_dir/data/image-00000-of-00001.parquet` and
`out_dir/data/non_image-00000-of-00001.parquet` with the Hub copy's columns and types (every
field a string, `image` an HF Image struct, null for a question without a figure). Its n
questions come in sets made as the real ones are ([P] HallusionBench.json): the sets go
round the nine subcategories; a VD set asks each of its questions on the original figure
(figure 0, visual_input 1) and on one or two edited ones (visual_input 2); a VS set asks
them without a figure (figure 0, visual_input 0, in `non_image`), on the original chart
(figure 1) and on an edited one (figure 2). So every metric has something to count: the
figures, the question groups across figures, the easy and the hard pairs. The last set is
cut short to make n. Answers (gt_answer) are drawn from a generator seeded by (seed, set).

Each figure is a 48x48 PNG of one colour per (set, figure), a few pixels varied: valid
images and nothing more; no model should be expected to answer from them."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from PIL import Image

from visioneval.benchmarks.hallusionbench.spec import SUBCATEGORIES
from visioneval.io.parquet import write_hf_parquet

SIZE = 48
PAIRS = [(c, s) for c, subs in SUBCATEGORIES.items() for s in subs]
FILES = {"image": "image-00000-of-00001.parquet",
         "non_image": "non_image-00000-of-00001.parquet"}


def figure(set_index: int, figure_id: int, rng: np.random.Generator) -> bytes:
    colour = np.array([(37 * set_index) % 256, (91 * figure_id + 40) % 256,
                       (53 * set_index + 17 * figure_id) % 256], dtype=float)
    pixels = np.broadcast_to(colour, (SIZE, SIZE, 3)) + rng.normal(0, 4, (SIZE, SIZE, 3))
    buf = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def set_rows(set_index: int, seed: int) -> Iterator[dict]:
    """One set's questions, figure by figure, each question on every figure of the set."""
    category, subcategory = PAIRS[set_index % len(PAIRS)]
    set_id = str(set_index // len(PAIRS))
    rng = np.random.default_rng((seed, set_index))
    questions = int(rng.integers(2, 5)) if category == "VD" else int(rng.integers(1, 4))
    if category == "VD":
        figures = [(0, "1")] + [(f, "2") for f in range(1, int(rng.integers(2, 4)))]
    else:
        figures = [(0, "0"), (1, "1"), (2, "2")]
    for figure_id, visual_input in figures:
        name = f"./{category}/{subcategory}/{set_id}_{figure_id}.png"
        png = figure(set_index, figure_id, rng) if visual_input != "0" else None
        for q in range(questions):
            yes = bool(rng.integers(0, 2))
            thing = f"mark {q} of the {subcategory} set {set_id}"
            yield {"category": category, "subcategory": subcategory,
                   "visual_input": visual_input, "set_id": set_id,
                   "figure_id": str(figure_id), "sample_note": f"synthetic {subcategory}",
                   "question_id": str(q),
                   "question": f"Is {thing} larger than the one beside it?",
                   "gt_answer_details": f"{'Yes' if yes else 'No'}, {thing} is "
                                        f"{'' if yes else 'not '}larger.",
                   "gt_answer": "1" if yes else "0",
                   "filename": name if png is not None else None,
                   "image": {"bytes": png, "path": name} if png is not None else None}


def synthetic_rows(n: int, seed: int) -> Iterator[dict]:
    made, set_index = 0, 0
    while made < n:
        for row in set_rows(set_index, seed):
            if made == n:
                return
            made += 1
            yield row
        set_index += 1


def write_synthetic(out_dir: Path, n: int, seed: int = 0) -> dict[str, tuple[Path, int]]:
    """Write n questions; the same (n, seed) gives the same bytes. Returns each split's file
    and row count."""
    if n < 1:
        raise ValueError("n must be >= 1")
    splits: dict[str, list[dict]] = {"image": [], "non_image": []}
    for row in synthetic_rows(n, seed):
        splits["image" if row["visual_input"] != "0" else "non_image"].append(row)
    out = {}
    for split, rows in splits.items():
        path = Path(out_dir) / "data" / FILES[split]
        write_hf_parquet(path, rows or [_empty_row()], ["image"])
        if not rows:  # a split with no question: the file with its columns and no row
            _truncate(path)
        out[split] = (path, len(rows))
    return out


def _empty_row() -> dict:
    return {c: "" for c in ("category", "subcategory", "visual_input", "set_id", "figure_id",
                            "sample_note", "question_id", "question", "gt_answer_details",
                            "gt_answer", "filename")} | {"image": None}


def _truncate(path: Path) -> None:
    table = pq.read_table(path)
    pq.write_table(table.slice(0, 0), path)
