"""Shape, scene and difficulty from an `image_name`: the dataset has no label columns.

File names follow the generator's save path ([R] Data_generator/generator.py):
- LOGO and IN: `shape-Scene-Difficulty-strength-id.png`, e.g. `cat-Ocean-Easy-1.25-7.png`;
- ICON: an extra icon index after the shape, `shape-index-Scene-Difficulty-strength-id.png`,
  e.g. `animal-1-Medieval_Village-Easy-1.5-90.png` (the original takes the scene from field
  [2] for ICON and [1] otherwise, Evaluator.py).

Labels keep the file's spelling (`stationary`, `benz`, `paper_clip`); scoring decides how to
compare them. A shape may itself contain hyphens: the pattern is anchored on the difficulty.

Odd names are read as lmms-eval's `parse_image_name` reads them (`lmms_eval/tasks/
illusionbench/arshia_utils.py`): empty fields between hyphens are dropped
(`vehicle--2-City-...` is `vehicle-2-City-...`), and a trailing all-digit field of the shape
part is an index, not part of the shape, in every subset (LOGO `bmw-1-Cloud-...` is `bmw`).
ICON names still need their index; a name without one is skipped with its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TAIL = r"-(?P<scene>[^-]+)-(?P<difficulty>easy|hard)-(?P<strength>\d+(?:\.\d+)?)-(?P<id>[^-]+)"
PATTERNS = {
    "ICON": re.compile(rf"(?P<shape>.+?)-(?P<index>\d+){_TAIL}", re.IGNORECASE),
    "LOGO": re.compile(rf"(?P<shape>.+?)(?:-(?P<index>\d+))?{_TAIL}", re.IGNORECASE),
    "IN": re.compile(rf"(?P<shape>.+?)(?:-(?P<index>\d+))?{_TAIL}", re.IGNORECASE),
}
_PNG = re.compile(r"(?P<stem>.*)\.png", re.IGNORECASE)
SPELLED = {
    "ICON": "shape-index-Scene-Difficulty-strength-id.png",
    "LOGO": "shape-Scene-Difficulty-strength-id.png",
    "IN": "shape-Scene-Difficulty-strength-id.png",
}


class BadImageName(ValueError):
    """An image_name that does not follow its subset's pattern; the message says which."""


@dataclass(frozen=True)
class ImageName:
    shape: str
    scene: str
    difficulty: str  # "Easy" or "Hard"
    strength: str
    id: str
    index: str | None = None  # ICON only


def parse(subset: str, image_name: object) -> ImageName:
    """The labels in `image_name` under the subset's pattern, or BadImageName saying why."""
    if not isinstance(image_name, str) or not image_name.strip():
        raise BadImageName("image_name is empty or not text")
    base = _PNG.fullmatch(image_name.strip().rsplit("/", 1)[-1])
    # lmms-eval drops empty fields: "vehicle--2-City" has the fields vehicle, 2, City.
    stem = "-".join(f for f in base["stem"].split("-") if f) if base else None
    match = PATTERNS[subset].fullmatch(stem) if stem else None
    if match is None:
        raise BadImageName(f"does not follow the {subset} pattern {SPELLED[subset]}")
    parts = match.groupdict()
    return ImageName(shape=parts["shape"], scene=parts["scene"],
                     difficulty=parts["difficulty"].capitalize(), strength=parts["strength"],
                     id=parts["id"], index=parts.get("index"))
