"""Write the small example dataset of `visioneval vqa`: 12 PNG images of coloured shapes
and `questions.jsonl` with multiple-choice questions about colour, shape and counting.

Run from the repository root: `uv run python examples/vqa/make_example.py`. The images are
drawn from fixed descriptions (no randomness), so the files are the same on every run.
"""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image, ImageDraw

SIZE = 128
COLOURS = {"red": (220, 40, 40), "green": (40, 170, 60), "blue": (40, 80, 220),
           "yellow": (235, 200, 30), "purple": (140, 60, 180)}
# (file stem, [(shape, colour, (x, y) centre)], category, question, options, answer letter)
ITEMS = [
    ("circle_red", [("circle", "red", (64, 64))], "colour",
     "What colour is the shape?", ["blue", "red", "green", "yellow"], "B"),
    ("square_blue", [("square", "blue", (64, 64))], "shape",
     "Which shape is shown?", ["circle", "triangle", "square"], "C"),
    ("triangle_green", [("triangle", "green", (64, 64))], "shape",
     "Which shape is shown?", ["triangle", "square", "circle"], "A"),
    ("two_circles", [("circle", "yellow", (36, 64)), ("circle", "yellow", (92, 64))],
     "count", "How many circles are there?", ["1", "2", "3", "4"], "B"),
    ("three_squares", [("square", "purple", (32, 40)), ("square", "purple", (96, 40)),
                       ("square", "purple", (64, 96))],
     "count", "How many squares are there?", ["2", "4", "3", "5"], "C"),
    ("square_yellow", [("square", "yellow", (64, 64))], "colour",
     "What colour is the square?", ["yellow", "purple", "red"], "A"),
    ("circle_and_square", [("circle", "green", (36, 64)), ("square", "red", (92, 64))],
     "colour", "What colour is the square?", ["green", "blue", "yellow", "red"], "D"),
    ("four_triangles", [("triangle", "blue", (32, 32)), ("triangle", "blue", (96, 32)),
                        ("triangle", "blue", (32, 96)), ("triangle", "blue", (96, 96))],
     "count", "How many triangles are there?", ["4", "3", "6", "2"], "A"),
    ("circle_purple", [("circle", "purple", (64, 64))], "shape",
     "Which shape is shown?", ["square", "circle", "triangle"], "B"),
    ("left_of", [("triangle", "red", (32, 64)), ("circle", "blue", (96, 64))], "shape",
     "Which shape is on the left?", ["circle", "square", "triangle"], "C"),
    ("one_square", [("square", "green", (64, 64))], "count",
     "How many squares are there?", ["1", "2", "3"], "A"),
    ("triangle_yellow", [("triangle", "yellow", (64, 64))], "colour",
     "What colour is the triangle?", ["red", "blue", "purple", "yellow"], "D"),
]


def draw(shapes: list[tuple[str, str, tuple[int, int]]]) -> Image.Image:
    image = Image.new("RGB", (SIZE, SIZE), (245, 245, 240))
    pen = ImageDraw.Draw(image)
    for shape, colour, (x, y) in shapes:
        r = 22 if len(shapes) > 1 else 40
        fill = COLOURS[colour]
        if shape == "circle":
            pen.ellipse([x - r, y - r, x + r, y + r], fill=fill)
        elif shape == "square":
            pen.rectangle([x - r, y - r, x + r, y + r], fill=fill)
        else:
            pen.polygon([(x, y - r), (x + r, y + r), (x - r, y + r)], fill=fill)
    return image


def main(folder: Path = Path(__file__).parent) -> None:
    (folder / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    for stem, shapes, category, question, options, answer in ITEMS:
        draw(shapes).save(folder / "images" / f"{stem}.png", optimize=True)
        lines.append(json.dumps({"id": stem, "image": f"images/{stem}.png",
                                 "question": question, "choices": options,
                                 "answer": answer, "category": category}))
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
