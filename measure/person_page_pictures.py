"""The pictures of docs/human.md: a person's page (`--backend human`) at two window sizes,
its start, trial, break and end screens side by side, from a real run of Vernier acuity
answered in headless Chromium (Playwright, in the dev dependencies).

    uv run python measure/person_page_pictures.py

writes docs/images/human-1280x800.png and docs/images/human-800x600.png."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw
from playwright.sync_api import sync_playwright

from visioneval.benchmarks.vernier.paradigm import Vernier
from visioneval.paradigms.dataset import write_dataset
from visioneval.paradigms.paradigm import Design

SIZES = ((1280, 800), (800, 600))
SHOWN = 480  # px wide, each screen in the sheet
URL = re.compile(r"open (http://127\.0\.0\.1:\d+/) in a browser")
DOCS = Path(__file__).parents[1] / "docs" / "images"


def screens(data: Path, out: Path, width: int, height: int) -> list[tuple[str, bytes]]:
    proc = subprocess.Popen([sys.executable, "-m", "visioneval", "vernier", "--data", str(data),
                             "--backend", "human", "--model", "P01", "--out", str(out),
                             "--samples", "2", "--base-url", "http://127.0.0.1:0",
                             "--no-progress", "--no-report"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    url = next(m.group(1) for text in proc.stderr if (m := URL.search(text)))
    shots = []
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = chromium.new_page(viewport={"width": width, "height": height})
        page.goto(url)
        shots.append(("start", page.screenshot()))
        page.fill("input[name=break_every]", "1")
        page.click("#begin")
        page.wait_for_selector("#trial:not([hidden])")
        page.wait_for_timeout(100)
        shots.append(("trial", page.screenshot()))
        page.keyboard.press("l")
        page.wait_for_selector("#pause:not([hidden])")
        shots.append(("break", page.screenshot()))
        page.keyboard.press(" ")
        page.wait_for_selector("#trial:not([hidden])")
        page.keyboard.press("r")
        page.wait_for_selector("#end:not([hidden])")
        shots.append(("end", page.screenshot()))
        chromium.close()
    proc.communicate(timeout=30)
    return shots


def sheet(shots: list[tuple[str, bytes]], width: int, height: int) -> Image.Image:
    scale = SHOWN / width
    cell = (SHOWN, round(height * scale))
    out = Image.new("RGB", (len(shots) * (cell[0] + 12) + 12, cell[1] + 40), "white")
    draw = ImageDraw.Draw(out)
    for i, (name, png) in enumerate(shots):
        shot = Image.open(io.BytesIO(png)).convert("RGB").resize(cell, Image.Resampling.LANCZOS)
        x = 12 + i * (cell[0] + 12)
        out.paste(shot, (x, 12))
        draw.rectangle((x - 1, 11, x + cell[0], 12 + cell[1]), outline="#999999")
        draw.text((x, cell[1] + 18), f"{name} ({width} x {height})", fill="black")
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "data"
        write_dataset(Vernier(), data, Design(trials=2), seed=0)
        for width, height in SIZES:
            shots = screens(data, Path(scratch) / f"run{width}", width, height)
            path = DOCS / f"human-{width}x{height}.png"
            sheet(shots, width, height).save(path, optimize=True)
            print(f"{path}: {', '.join(name for name, _ in shots)}")


if __name__ == "__main__":
    main()
