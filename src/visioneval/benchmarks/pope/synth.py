"""A small POPE-shaped dataset for tests and offline runs, in the Hub copy's files and schema.

`write_synthetic(out, images, seed)` writes `Full/<setting>-00000-of-00001.parquet` for the
three settings and the default config's `data/test-0000N-of-00003.parquet` (the settings
one after another, adversarial first, `category` naming each), with the Hub's columns: id,
question_id, question, answer, image_source, category (text) and image (an HF Image struct
holding JPEG bytes).

It is built as POPE is ([P] main.py): each image has 6 questions "Is there a(n) <object> in
the image?", questions 6k+1 to 6k+6 about image k, odd ones "yes" (an object drawn in the
image, the same three questions in every setting), even ones "no", an absent object chosen
per setting: random (any), popular (the set's most frequent objects), adversarial (the
objects that co-occur most with the image's). Where RePOPE corrects a question of the
first images (corrections.json), that question, its image name and its published label are
used, so the corrected label set is exercised end to end; the other images are named
`synthetic_<k>` (a second source). Each image is a 96x64 JPEG with its objects' names
written in coloured boxes: a valid image, nothing more."""

from __future__ import annotations

import io
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from visioneval.benchmarks.pope.labels import manifest
from visioneval.benchmarks.pope.spec import NO, SETTINGS, YES
from visioneval.io.parquet import write_hf_parquet
from visioneval.metrics.coco import COCO_OBJECTS

COLUMNS = ("id", "question_id", "question", "answer", "image_source", "category", "image")
_QUESTION = re.compile(r"Is there an? (?P<object>.+) in the imag?n?e\?")
_EVIDENCE = re.compile(r'(?P<image>[^,]+), "(?P<question>[^"]+)"')


def question(obj: str) -> str:
    """The question about one object, with "an" before a vowel as the POPE files write it."""
    article = "an" if obj[0] in "aeiou" else "a"
    return f"Is there {article} {obj} in the image?"


def object_of(text: str) -> str | None:
    found = _QUESTION.fullmatch(text)
    return found["object"] if found else None


def published(images: int) -> dict[tuple[str, int], tuple[str, str, str]]:
    """(setting, question_id) -> (image, question, label) of the corrections among the first
    `images` images, as RePOPE's files give them."""
    out = {}
    for c in manifest().corrections:
        setting, _, qid = c.item.partition("/")
        found = _EVIDENCE.match(c.evidence)
        if found and qid.isdigit() and int(qid) <= 6 * images:
            out[(setting, int(qid))] = (found["image"], found["question"], c.original)
    return out


def plan(images: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    """Each setting's rows (without image bytes), in question_id order."""
    rng = random.Random(f"pope-synth/{seed}")
    known = published(images)
    names, present = [], []
    for k in range(images):
        qids = range(6 * k + 1, 6 * k + 7)
        found = [known[(s, q)][0] for s in SETTINGS for q in qids if (s, q) in known]
        names.append(found[0] if found else f"synthetic_{k:06d}")
        objects: list[str] = []
        for q in qids[::2]:  # the "yes" questions, the same in every setting
            named = next((object_of(known[(s, q)][1]) for s in SETTINGS if (s, q) in known),
                         None)
            pool = [o for o in COCO_OBJECTS if o not in objects]
            objects.append(named if named and named not in objects else rng.choice(pool))
        present.append(objects)
    frequency = Counter(o for objects in present for o in objects)
    cooccur: dict[str, Counter[str]] = {}
    for objects in present:
        for a in objects:
            cooccur.setdefault(a, Counter()).update(b for b in objects if b != a)
    rows: dict[str, list[dict[str, Any]]] = {s: [] for s in SETTINGS}
    for setting in SETTINGS:
        for k in range(images):
            qids = range(6 * k + 1, 6 * k + 7)
            given = {q: known[(setting, q)] for q in qids if (setting, q) in known}
            taken = [*present[k], *(object_of(g[1]) or "" for g in given.values())]
            absent = iter(_negatives(setting, taken, frequency, cooccur, rng))
            for j, qid in enumerate(qids):
                obj = present[k][j // 2] if j % 2 == 0 else \
                    ("" if qid in given else next(absent))
                text, label = question(obj) if obj else "", YES if j % 2 == 0 else NO
                if qid in given:
                    _, text, label = given[qid]
                rows[setting].append({"question_id": str(qid), "question": text,
                                      "answer": label, "image_source": names[k],
                                      "category": setting, "objects": present[k]})
    return rows


def _negatives(setting: str, objects: list[str], frequency: Counter[str],
               cooccur: dict[str, Counter[str]], rng: random.Random) -> list[str]:
    """Three absent objects, sampled as the setting samples them ([P] main.py's `pope`)."""
    absent = [o for o in COCO_OBJECTS if o not in objects]
    if setting == "random":
        return rng.sample(absent, 3)
    if setting == "popular":
        ranked = sorted(absent, key=lambda o: (-frequency[o], COCO_OBJECTS.index(o)))
    else:
        together: Counter[str] = Counter()
        for o in objects:
            together.update(cooccur.get(o, Counter()))
        ranked = sorted(absent, key=lambda o: (-together[o], -frequency[o],
                                               COCO_OBJECTS.index(o)))
    return ranked[:3]


def render(objects: list[str], seed: str) -> bytes:
    """A 96x64 JPEG: the objects' names in coloured boxes on a grey ground."""
    rng = random.Random(seed)
    picture = Image.new("RGB", (96, 64), (200, 200, 200))
    draw = ImageDraw.Draw(picture)
    for i, obj in enumerate(objects):
        colour = tuple(rng.randrange(40, 220) for _ in range(3))
        top = 2 + 21 * i
        draw.rectangle((2, top, 93, top + 18), fill=colour)
        draw.text((5, top + 3), obj[:14], fill=(255, 255, 255))
    buf = io.BytesIO()
    picture.save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def write_synthetic(out_dir: Path, images: int, seed: int = 0) -> dict[str, Path]:
    """Write `images` images' questions per setting in both layouts; the same (images, seed)
    gives the same bytes. Returns the files by setting (Full) and `test`."""
    if images < 1:
        raise ValueError("images must be >= 1")
    rows = plan(images, seed)
    drawn: dict[str, bytes] = {}
    files: dict[str, Path] = {}
    test: list[dict[str, Any]] = []
    for setting in ("adversarial", "popular", "random"):  # the `test` config's order
        made: list[dict[str, Any]] = []
        for row in rows[setting]:
            name = row["image_source"]
            if name not in drawn:
                drawn[name] = render(row["objects"], f"{seed}/{name}")
            made.append({"id": str(len(test) + len(made)), **{
                c: row[c] for c in COLUMNS[1:-1]}, "image": {
                    "bytes": drawn[name], "path": f"{name}.jpg"}})
        path = Path(out_dir) / "Full" / f"{setting}-00000-of-00001.parquet"
        write_hf_parquet(path, made, ["image"])
        files[setting] = path
        test += made
    for i, setting in enumerate(("adversarial", "popular", "random")):
        part = [r for r in test if r["category"] == setting]
        path = Path(out_dir) / "data" / f"test-{i:05d}-of-00003.parquet"
        write_hf_parquet(path, part, ["image"])
    files["test"] = Path(out_dir) / "data"
    return files
