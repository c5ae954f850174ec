"""The stimulus pictures of a paradigm's docs page: a sheet of its stimuli, one row per
condition (the first four, `--rows`), a few of its levels from lowest to highest, each labelled with
its condition and level, drawn exactly as `visioneval data synth-NAME` draws them. Each is
shown with its longer side `--shown` px, resized by nearest neighbour (never smoothed).

    uv run python measure/stimulus_pictures.py --paradigm vernier
writes docs/images/vernier.png. `--conditions` picks the rows (names, comma-separated) and
`--shown` the size each stimulus is shown at: a grating of a few pixels a cycle needs its
own size, as a nearest-neighbour halving would alias it.
"""

from __future__ import annotations

import argparse
import io
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw

from visioneval.core.registry import definition
from visioneval.paradigms.trial import stimulus_seed

LABEL = 16  # px of label under each stimulus
SHOWN = 256  # px of a stimulus's longer side on the sheet (nearest neighbour: never smoothed)
FRAME = (160, 160, 160)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paradigm", required=True)
    parser.add_argument("--levels", type=int, default=4, help="levels shown per condition")
    parser.add_argument("--rows", type=int, default=4, help="conditions shown, at most")
    parser.add_argument("--conditions", default="",
                        help="conditions shown, comma-separated (default: the first --rows)")
    parser.add_argument("--shown", type=int, default=SHOWN,
                        help="px each stimulus is shown at, its longer side")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    paradigm = definition(args.paradigm).benchmark_class().paradigm  # type: ignore[attr-defined]
    every = list(paradigm.conditions())
    wanted = [w for w in args.conditions.split(",") if w]
    unknown = [w for w in wanted if w not in {c.name for c in every}]
    if unknown:
        raise SystemExit(f"{args.paradigm} has no condition {', '.join(unknown)}")
    conditions = [c for c in every if c.name in wanted] if wanted else every[:args.rows]
    shown = args.shown
    cells = []
    for condition in conditions:
        c = every.index(condition)
        levels = condition.levels
        step = max(1, (len(levels) - 1) // max(args.levels - 1, 1))
        picked = list(levels[::step])[:args.levels]
        row = []
        for li, level in enumerate(picked):
            made = paradigm.draw(condition, level, 0, stimulus_seed(0, c, li, 0))
            image = Image.open(io.BytesIO(made.png)).convert("RGB")
            scale = shown / max(image.size)
            image = image.resize((round(image.width * scale), round(image.height * scale)),
                                 Image.Resampling.NEAREST)
            row.append((image, f"{condition.name}: {level:g} "
                               f"{condition.unit or paradigm.unit}"))
        cells.append(row)
    columns = max(len(r) for r in cells)
    tall = max(image.height for row in cells for image, _ in row)
    wide = max(image.width for row in cells for image, _ in row)
    sheet = Image.new("RGB", (columns * (wide + 8) + 8, len(cells) * (tall + LABEL + 8) + 8),
                      "white")
    draw = ImageDraw.Draw(sheet)
    for r, row in enumerate(cells):
        for col, (image, label) in enumerate(row):
            x, y = 8 + col * (wide + 8), 8 + r * (tall + LABEL + 8)
            sheet.paste(image, (x, y))
            draw.rectangle((x - 1, y - 1, x + image.width, y + image.height), outline=FRAME)
            draw.text((x, y + image.height + 3), label, fill="black")
    out = args.out or Path(__file__).parents[1] / "docs" / "images" / f"{args.paradigm}.png"
    sheet.save(out, optimize=True)
    print(f"{out}: {len(cells)} condition(s) x {columns} level(s)")


if __name__ == "__main__":
    main()
