"""A small BlindTest-shaped dataset for tests and offline runs, in the Hub copy's file and
schema: `data/valid-00000-of-00001.parquet` with task, image (an HF Image struct of PNG
bytes), prompt, groundtruth and metadata (a JSON object) columns.

Each image is drawn as the paper's generators draw theirs ([P] src/*/README.md and the
notebooks), at 384 pixels: two 3-point line plots over a 12-cell grid with a known number
of crossings, their vertical distances in cells, and line thickness 2-4; two circles whose
gap is a fraction of the diameter (-0.15 to 0.3 by default, `--gaps`; negative
overlaps, 0 touches) at line width 1-3; a red oval around one letter of the paper's three
words; 5 to 9 Olympic-like rings or pentagons; 2 to 5 nested squares; blank and word grids
of 3 to 9 rows and columns; subway maps with 0 to 3 single-coloured paths between two of
the stations A-D. Prompts alternate between the task's two prompts ([P] src/prompts.md,
the subway one with its "{station1} to {station1}" as written); labels are what the Hub
stores: a number, "Yes"/"No", the letter, "rows,columns"."""

from __future__ import annotations

import io
import json
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from visioneval.benchmarks.blindtest.spec import (
    CIRCLED,
    GRID_BLANK,
    GRID_WORD,
    LINES,
    NESTED,
    OLYMPIC_CIRCLES,
    OLYMPIC_PENTAGONS,
    TASKS,
    TOUCHING,
)
from visioneval.io.parquet import write_hf_parquet

SIZE = 384
WORDS = ("Acknowledgement", "Subdermatoglyphic", "tHyUiKaRbNqWeOpXcZvM")
GAPS = (-0.15, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2, 0.3)
PROMPTS = {
    LINES: ("Count the intersection points where the blue and red lines meet. Put your "
            "answer in curly brackets, e.g., {2}.",
            "How many times do the blue and red lines touch each other? Answer with a "
            "number in curly brackets, e.g., {5}."),
    TOUCHING: ("Are the two circles touching each other? Answer with Yes/No.",
               "Are the two circles overlapping? Answer with Yes/No."),
    CIRCLED: ("Which letter is being circled?",
              "Which character is being highlighted with a red oval?"),
    NESTED: ("Count total number of squares in the image. Answer with only the number in "
             "numerical format in curly brackets e.g. {3}.",
             "How many squares are in the image? Please answer with a number in curly "
             "brackets e.g., {10}."),
    GRID_BLANK: ("Count the number of rows and columns and answer with numbers in curly "
                 "brackets. For example, rows={5} columns={6}",
                 "How many rows and columns are in the table? Answer with only the numbers "
                 "in a pair (row, column), e.g., (5,6)"),
}
PROMPTS[GRID_WORD] = PROMPTS[GRID_BLANK]
SHAPE_PROMPTS = ("How many {shapes} are in the image? Answer with only the number in "
                 "numerical format.",
                 "Count the {shapes} in the image. Answer with a number in curly brackets "
                 "e.g. {3}.")
SUBWAY_PROMPTS = ("How many single-colored paths go from {a} to {b}? Answer with a number in "
                  "curly brackets, e.g., {{3}}",
                  "Count the one-colored routes that go from {a} to {a}. Answer with a "
                  "number in curly brackets, e.g., {{3}}")
COLOURS = ("red", "blue", "green", "orange", "purple", "brown")


def _png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def _canvas() -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("RGB", (SIZE, SIZE), "white")
    return image, ImageDraw.Draw(image)


def _crossings(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> int:
    """Points where two polylines over the same x positions cross (sign changes of the
    difference between the segments' ends, and touching ends)."""
    found = 0
    diffs = [ya - yb for (_, ya), (_, yb) in zip(a, b, strict=True)]
    for k in range(len(diffs) - 1):
        if diffs[k] == 0 or diffs[k] * diffs[k + 1] < 0:
            found += 1
    return found + (diffs[-1] == 0)


GRID_CELLS = 12  # [P] src/LineIntersection/2dline.ipynb: a 12-cell grid of y positions


def line_plot(rng: random.Random, k: int) -> tuple[bytes, str, dict[str, Any]]:
    """Two 3-point lines over a 12-cell grid of y positions, each pair of points at one x
    apart ([P] 2dline.ipynb `random.sample(ticks, 2)`); `distances`: |Δy| at each x in
    cells, floored, at least 1, as the paper's metadata records them."""
    cell = (SIZE - 48.0) / GRID_CELLS
    ticks = [24.0 + i * cell for i in range(GRID_CELLS + 1)]
    xs = [24.0, SIZE / 2, SIZE - 24.0]
    pairs = [rng.sample(range(len(ticks)), 2) for _ in xs]
    blue = [(x, ticks[a]) for x, (a, _) in zip(xs, pairs, strict=True)]
    red = [(x, ticks[b]) for x, (_, b) in zip(xs, pairs, strict=True)]
    thickness = 2 + k % 3
    image, draw = _canvas()
    draw.line(blue, fill="blue", width=thickness)
    draw.line(red, fill="red", width=thickness)
    count = _crossings(blue, red)
    distances = [max(1, abs(a - b)) for a, b in pairs]
    return _png(image), str(count), {"thickness": thickness, "resolution": SIZE,
                                     "intersections": count, "distances": distances,
                                     "grid_size": GRID_CELLS}


def two_circles(rng: random.Random, k: int, gaps: Sequence[float] = GAPS
                ) -> tuple[bytes, bool, dict[str, Any]]:
    """Two circles of one diameter whose gap is `distance` diameters (negative: overlap)."""
    diameter = SIZE * rng.choice((0.2, 0.25, 0.3))
    distance = gaps[k % len(gaps)]
    width = 1 + k % 3
    centre = (diameter + distance * diameter)
    angle = rng.choice((0.0, math.pi / 4, math.pi / 2))
    cx, cy = SIZE / 2 - centre / 2 * math.cos(angle), SIZE / 2 - centre / 2 * math.sin(angle)
    image, draw = _canvas()
    r = diameter / 2
    for x, y in ((cx, cy), (cx + centre * math.cos(angle), cy + centre * math.sin(angle))):
        draw.ellipse((x - r, y - r, x + r, y + r), outline=rng.choice(COLOURS), width=width)
    meta = {"diameter": round(diameter / SIZE, 3), "distance": distance, "thickness": width,
            "gap_px": round(distance * diameter, 1), "rotation": round(math.degrees(angle))}
    return _png(image), distance <= 0, meta


def circled_letter(rng: random.Random, k: int) -> tuple[bytes, str, dict[str, Any]]:
    word = WORDS[k % len(WORDS)]
    index = rng.randrange(len(word))
    image, draw = _canvas()
    step = (SIZE - 20) / len(word)
    for i, letter in enumerate(word):
        draw.text((10 + i * step + step / 3, SIZE / 2 - 6), letter, fill="black")
    x = 10 + index * step + step / 3 + 3
    draw.ellipse((x - step / 2 - 2, SIZE / 2 - 14, x + step / 2 + 2, SIZE / 2 + 14),
                 outline="red", width=1 + k % 3)
    return _png(image), word[index], {"word": word, "index": index, "thickness": 1 + k % 3}


def shapes(rng: random.Random, k: int, sides: int) -> tuple[bytes, str, dict[str, Any]]:
    count = 5 + k % 5
    image, draw = _canvas()
    r = SIZE / (count + 3)
    for i in range(count):
        x = r * 1.5 + i * r * 1.6 * (SIZE - 3 * r) / (count * 1.6 * r)
        y = SIZE / 2 + (r * 0.8 if i % 2 else 0)
        colour = COLOURS[i % len(COLOURS)]
        if sides == 0:
            draw.ellipse((x - r, y - r, x + r, y + r), outline=colour, width=3)
        else:
            draw.regular_polygon((x, y, r), sides, outline=colour, width=3)
    return _png(image), str(count), {"count": count, "colour": "coloured", "thickness": 3}


def nested_squares(rng: random.Random, k: int) -> tuple[bytes, str, dict[str, Any]]:
    depth = 2 + k % 4
    image, draw = _canvas()
    low, high, width = 24.0, SIZE - 24.0, 2 + k % 3
    for _ in range(depth):
        draw.rectangle((low, high * 0 + low, high, high), outline="black", width=width)
        gap = (high - low) * rng.uniform(0.08, 0.16)
        low, high = low + gap, high - gap
    return _png(image), str(depth), {"depth": depth, "thickness": width}


def grid(rng: random.Random, k: int, words: bool) -> tuple[bytes, str, dict[str, Any]]:
    rows, columns = 3 + rng.randrange(7), 3 + rng.randrange(7)
    image, draw = _canvas()
    cell_w, cell_h = (SIZE - 20) / columns, (SIZE - 20) / rows
    for i in range(rows + 1):
        draw.line((10, 10 + i * cell_h, SIZE - 10, 10 + i * cell_h), fill="black", width=2)
    for j in range(columns + 1):
        draw.line((10 + j * cell_w, 10, 10 + j * cell_w, SIZE - 10), fill="black", width=2)
    if words:
        for i in range(rows):
            for j in range(columns):
                if rng.random() < 0.6:
                    draw.text((14 + j * cell_w, 12 + i * cell_h + cell_h / 3),
                              rng.choice(("cat", "map", "sun", "key")), fill="black")
    return _png(image), f"{rows},{columns}", {"rows": rows, "columns": columns,
                                              "type": "word" if words else "blank"}


def subway(rng: random.Random, k: int) -> tuple[bytes, str, str, dict[str, Any]]:
    paths = k % 4
    image, draw = _canvas()
    spots = {"A": (60, 60), "B": (SIZE - 60, SIZE - 60), "C": (SIZE - 60, 60),
             "D": (60, SIZE - 60)}
    a, b = "A", "B"
    for p in range(paths):
        bend = (rng.randrange(100, SIZE - 100), rng.randrange(100, SIZE - 100))
        draw.line((spots[a], bend, spots[b]), fill=COLOURS[p], width=4)
    for name, (x, y) in spots.items():
        draw.rectangle((x - 14, y - 14, x + 14, y + 14), outline="black", fill="white",
                       width=2)
        draw.text((x - 3, y - 6), name, fill="black")
    text = SUBWAY_PROMPTS[k % 2].format(a=a, b=b)
    return _png(image), str(paths), text, {"paths": paths, "from": a, "to": b,
                                           "thickness": 4}


def make_row(task: str, rng: random.Random, k: int,
             gaps: Sequence[float] = GAPS) -> dict[str, Any]:
    """One row of `task` (its k-th): the Hub's columns; `gaps`: the circles' distances."""
    text = PROMPTS.get(task, ("", ""))[k % 2]
    if task == LINES:
        image, label, meta = line_plot(rng, k)
    elif task == TOUCHING:
        image, touching, meta = two_circles(rng, k, gaps)
        overlapping = meta["distance"] < 0
        label = "Yes" if (touching if k % 2 == 0 else overlapping) else "No"
    elif task == CIRCLED:
        image, label, meta = circled_letter(rng, k)
    elif task in (OLYMPIC_CIRCLES, OLYMPIC_PENTAGONS):
        name = "circles" if task == OLYMPIC_CIRCLES else "pentagons"
        image, label, meta = shapes(rng, k, 0 if name == "circles" else 5)
        text = SHAPE_PROMPTS[k % 2].replace("{shapes}", name)
    elif task == NESTED:
        image, label, meta = nested_squares(rng, k)
    elif task in (GRID_BLANK, GRID_WORD):
        image, label, meta = grid(rng, k, task == GRID_WORD)
    else:
        image, label, text, meta = subway(rng, k)
    meta["prompt_number"] = 1 + k % 2
    return {"task": task, "image": {"bytes": image, "path": None}, "prompt": text,
            "groundtruth": label, "metadata": json.dumps(meta)}


def write_synthetic(out: Path, per_task: int, seed: int, capped: bool = False,
                    gaps: Sequence[float] = GAPS) -> tuple[Path, int]:
    """`data/valid-00000-of-00001.parquet` under `out`: `per_task` rows of each task label
    (`capped`: at most the Hub's count of it, rows.json), in the Hub's order (by task),
    the circles' rows cycling through `gaps`. Returns the file and its rows."""
    rng = random.Random(seed)
    published = json.loads(Path(__file__).with_name("rows.json").read_text())["rows"]
    rows = [make_row(task, rng, k, gaps) for task in TASKS
            for k in range(min(per_task, published[task]) if capped else per_task)]
    path = out / "data" / "valid-00000-of-00001.parquet"
    write_hf_parquet(path, rows, ["image"])
    return path, len(rows)
