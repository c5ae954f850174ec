"""A small CANVAS-shaped directory with worked examples (numbers computed by hand in
the tests), built with `visioneval.canvas.synth`."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from visioneval.canvas.synth import frame, rect, write_gen, write_gt
from visioneval.cli import app

MODEL, VARIANT = "gpt-4o", "image_only"
RED, BLUE, GREEN, WHITE, BLACK = (1, 0, 0), (0, 0, 1), (0, 0.6, 0), (1, 1, 1), (0, 0, 0)


def swapped() -> tuple:
    """GT: A top-left, B bottom-right. Generated: C top-right, D bottom-left.
    Same count, zero overlap: CANVAS's P = R = 1, IoU >= 0.5 F1 = 0."""
    gt = frame(100, 100, rect("A", 0, 0, 50, 50, BLUE), rect("B", 50, 50, 50, 50, GREEN))
    gen = frame(100, 100, rect("C", 50, 0, 50, 50, RED), rect("D", 0, 50, 50, 50, GREEN))
    return gt, gen


def overlapping() -> tuple:
    """Generated: two 50x50 squares overlapping by 25x25, and a full-size background."""
    gt = frame(100, 100, rect("R1", 0, 0, 50, 50, BLUE))
    gen = frame(100, 100, rect("Background", 0, 0, 100, 100, WHITE),
                rect("R1", 0, 0, 50, 50, BLUE), rect("R2", 25, 25, 50, 50, RED))
    return gt, gen


def write_fixture(base: Path) -> Path:
    gt, gen = swapped()
    write_gt(base, "ex1", gt, shape="nodes",
             expected_tools=["create_frame", "create_rectangle", "create_text"])
    write_gen(base, "ex1", gen, MODEL, VARIANT,
              calls=["create_frame", "create_text", "create_text"])
    gt, gen = overlapping()
    write_gt(base, "ex2", gt, shape="document")
    write_gen(base, "ex2", gen, MODEL, VARIANT, calls=None, hierarchy_name=False)
    return base


def folder(base: Path, gid: str) -> Path:
    return base / "results" / "generation_gen" / MODEL / VARIANT / f"{gid}-{MODEL}-{VARIANT}"


def gen_json(base: Path, gid: str) -> Path:
    f = folder(base, gid)
    return next(p for p in (f / f"{f.name}-figma-hierarchy.json", f / f"{f.name}.json")
                if p.exists())


def write_broken(base: Path) -> Path:
    """Pairs whose files are broken in one way each (all with a fine GT)."""
    ok_gt, ok_gen = swapped()
    for gid in ("bad-json", "no-coords", "zero-frame", "nan", "bad-image", "no-gen-image",
                "no-gen-json"):
        write_gt(base, gid, swapped()[0], shape="nodes")
        write_gen(base, gid, swapped()[1], MODEL, VARIANT)
    gen_json(base, "bad-json").write_text("{not json")
    doc = json.loads(gen_json(base, "no-coords").read_text())
    frame_node = doc["document"]["children"][0]["children"][0]
    del frame_node["children"][0]["absoluteBoundingBox"]["x"]
    gen_json(base, "no-coords").write_text(json.dumps(doc))
    doc["document"]["children"][0]["children"][0]["absoluteBoundingBox"]["width"] = 0
    frame_node["children"][0]["absoluteBoundingBox"]["x"] = 50
    gen_json(base, "zero-frame").write_text(json.dumps(doc))
    text = gen_json(base, "nan").read_text().replace('"x": 50', '"x": NaN', 1)
    gen_json(base, "nan").write_text(text)
    f = folder(base, "bad-image")
    (f / f"{f.name}.png").write_bytes(b"\x89PNG\r\n\x1a\n not really")
    f = folder(base, "no-gen-image")
    (f / f"{f.name}.png").unlink()
    gen_json(base, "no-gen-json").unlink()
    return base


def invoke(*args: object):
    """`visioneval layout ARGS`, the real command."""
    return CliRunner().invoke(app, ["layout", *map(str, args)], catch_exceptions=False)


def run_dir(out: Path) -> Path:
    """The run directory of `visioneval layout --out OUT` (`--out FILE.json`: FILE)."""
    return out.with_suffix("") if out.suffix == ".json" else out


def load(out: Path) -> dict:
    """The results file (`results.json`) of the run `visioneval layout --out OUT` made."""
    return json.loads((run_dir(out) / "results.json").read_text())


def by_id(document: dict) -> dict[str, dict]:
    return {s["id"]: s for s in document["samples"]}
