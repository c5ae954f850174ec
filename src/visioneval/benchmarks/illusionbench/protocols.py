"""The three scoring rules as pure functions of (response text, labels).

- `original_bucket` ([R] Evaluator.py, the lines after `neg_class_white_space = ...`): the
  response is lowercased (the original's `model_response` returns `.lower()`); it is
  **shape** if the lowercased shape class occurs in it, else **texture** (the scene) if the
  lowercased scene or the scene with `_` -> space (not lowercased) occurs, else **rest**.
  With `fixed=True` the quirks are corrected (see `variants`).
- `lmms_strict` ([L5917] `_extract_answer`, `_normalize_text`, `_strict_match`): the text
  after the first case-insensitive "answer", optional spaces, ":", up to the first newline,
  comma or period; normalised; must equal the normalised label.
- `lmms_recall` (lmms-eval main `_recall_match`): the lowercased label, or it with `_` or
  `-` turned into a space, occurs in the lowercased response; no precedence between labels.
"""

from __future__ import annotations

import re
from typing import Literal

from visioneval.benchmarks.illusionbench.spec import QUIRK_ALIASES

Bucket = Literal["shape", "texture", "rest"]
_ANSWER = re.compile(r"answer\s*:\s*([^\n,.]+)", re.IGNORECASE)


def variants(label: str, *, fixed: bool, scene: bool) -> tuple[str, ...]:
    """The spellings of a label the original rule looks for in the lowercased response.

    As published: the shape lowercased; the scene lowercased, plus the scene with `_` -> space
    *not* lowercased ("Medieval Village", which a lowercased response never contains).
    Fixed: both lowercased, with and without `_` -> space, plus the aliases in
    `QUIRK_ALIASES` (Stationery, Mercedes, Times Square)."""
    low = label.lower()
    if not fixed:
        return (low, label.replace("_", " ")) if scene else (low,)
    return tuple(dict.fromkeys((low, low.replace("_", " "), *QUIRK_ALIASES.get(low, ()))))


def original_bucket(text: str, shape: str, scene: str, *, fixed: bool = False) -> Bucket:
    """The bucket the original rule puts a response in, shape before scene."""
    prediction = text.lower()
    if any(v in prediction for v in variants(shape, fixed=fixed, scene=False)):
        return "shape"
    if any(v in prediction for v in variants(scene, fixed=fixed, scene=True)):
        return "texture"
    return "rest"


def lmms_normalize(text: str) -> str:
    """Lowercase; `_` and `-` -> space; other non-alphanumerics -> space; spaces collapsed."""
    text = text.strip().lower().replace("_", " ").replace("-", " ")
    return re.sub(r"\s+", " ", re.sub(r"[^a-z0-9\s]+", " ", text)).strip()


def lmms_extract(text: str) -> str:
    """The answer after the first "answer:", or "" when there is none (scores 0)."""
    match = _ANSWER.search(text)
    return match.group(1).strip() if match else ""


def lmms_strict(text: str, label: str) -> tuple[str, bool]:
    """(extracted answer, correct): normalised exact match of the extracted answer."""
    answer = lmms_extract(text)
    gold = lmms_normalize(label)
    return answer, bool(gold) and lmms_normalize(answer) == gold


def lmms_recall(text: str, label: str) -> tuple[str, bool]:
    """(the label spelling found or "", correct): substring recall, no precedence."""
    prediction = text.strip().lower()
    gold = label.strip().lower()
    if not prediction or not gold:
        return "", False
    for variant in (gold, gold.replace("_", " "), gold.replace("-", " ")):
        if variant and variant in prediction:
            return variant, True
    return "", False
