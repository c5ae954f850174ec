"""The stimulus pictures of a paradigm's docs page: a sheet of its stimuli, one row per
condition (four by default, `--rows`), a few of its levels from lowest to highest, each
labelled with its condition and level, drawn exactly as `visioneval data synth-NAME` draws
them.

    uv run python measure/stimulus_pictures.py --paradigm vernier
writes docs/images/vernier.png.
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
SHOWN = 256  # px each stimulus is shown at (resized with nearest neighbour, never smoothed)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paradigm", required=True)
    parser.add_argument("--levels", type=int, default=4, help="levels shown per condition")
    parser.add_argument("--rows", type=int, default=4, help="conditions shown, at most")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    paradigm = definition(args.paradigm).benchmark_class().paradigm  # type: ignore[attr-defined]
    conditions = paradigm.conditions()[:args.rows]
    cells = []
    for c, condition in enumerate(conditions):
        levels = condition.levels
        step = max(1, (len(levels) - 1) // max(args.levels - 1, 1))
        picked = list(levels[::step])[:args.levels]
        row = []
        for li, level in enumerate(picked):
            made = paradigm.draw(condition, level, 0, stimulus_seed(0, c, li, 0))
            image = Image.open(io.BytesIO(made.png)).convert("RGB")
            scale = SHOWN / max(image.size)
            image = image.resize((round(image.width * scale), round(image.height * scale)),
                                 Image.Resampling.NEAREST)
            row.append((image, f"{condition.name}: {level:g} {paradigm.unit}"))
        cells.append(row)
    columns = max(len(r) for r in cells)
    sheet = Image.new("RGB", (columns * (SHOWN + 8) + 8, len(cells) * (SHOWN + LABEL + 8) + 8),
                      "white")
    draw = ImageDraw.Draw(sheet)
    for r, row in enumerate(cells):
        for col, (image, label) in enumerate(row):
            x, y = 8 + col * (SHOWN + 8), 8 + r * (SHOWN + LABEL + 8)
            sheet.paste(image, (x, y))
            draw.text((x, y + image.height + 2), label, fill="black")
    out = args.out or Path(__file__).parents[1] / "docs" / "images" / f"{args.paradigm}.png"
    sheet.save(out, optimize=True)
    print(f"{out}: {len(cells)} condition(s) x {columns} level(s)")


if __name__ == "__main__":
    main()
