"""An edit of a candidate answer: making one (make_edit picks the kind's rule and applies it
to the prose, or to the values of a JSON answer, which stays JSON) and seeing whether a
verdict's detail list names it (named)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from visioneval.evaluators.edits.colours import json_colour, text_colour
from visioneval.evaluators.edits.counts import json_count, text_count
from visioneval.evaluators.edits.missing import json_missing, text_missing
from visioneval.evaluators.edits.objects import json_object, text_object
from visioneval.evaluators.edits.structured import Structured, parse_json, unfence

EditKind = Literal["count", "object", "missing", "colour"]
KINDS: tuple[EditKind, ...] = ("count", "object", "missing", "colour")
DETAIL: dict[str, str] = {"count": "hallucinations", "object": "hallucinations",
                          "colour": "hallucinations", "missing": "missing_elements"}
"""The verdict's detail list that should name each kind (the rubrics' `details` keys)."""

_TextRule = Callable[[str, str, str], tuple[str, str, list[str]] | None]
_JsonRule = Callable[[Structured, str, str, str], tuple[str, list[str]] | None]
_TEXT_RULES: dict[str, _TextRule] = {"count": text_count, "object": text_object,
                                     "missing": text_missing, "colour": text_colour}
_JSON_RULES: dict[str, _JsonRule] = {"count": json_count, "object": json_object,
                                     "missing": json_missing, "colour": json_colour}


@dataclass(frozen=True)
class Edit:
    """One edit of a candidate output: the edited output, the edit in words, the words a
    judge that names it would use, and the detail list that should name it."""

    kind: EditKind
    output: str
    change: str
    markers: tuple[str, ...]
    detail: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, for a record's metadata."""
        return {"kind": self.kind, "change": self.change, "markers": list(self.markers),
                "detail": self.detail, "output": self.output}


def make_edit(kind: EditKind, output: str, reference: str = "", task: str = "") -> Edit | None:
    """None when the rule does not apply to this output (no number, no colour word ...)."""
    if kind not in KINDS:
        raise ValueError(f"unknown edit kind {kind!r}: one of {', '.join(KINDS)}")
    before, body, after = unfence(output)
    if not body.strip():
        return None
    structured = parse_json(before, body, after)
    if structured is not None:
        found = _json_edit(kind, structured, output, reference, task)
    else:  # prose, or a fenced block of prose: edited inside its fence
        found = _TEXT_RULES[kind](body, reference, task)
    if found is None:
        return None
    edited, change, words = found
    if structured is None:
        edited = before + edited + after
    markers = tuple(dict.fromkeys(m.lower() for m in words if m.strip()))
    if edited == output or not markers:
        return None
    return Edit(kind, edited, change, markers, DETAIL[kind])


def _json_edit(kind: str, answer: Structured, output: str, reference: str,
               task: str) -> tuple[str, str, list[str]] | None:
    try:
        found = _JSON_RULES[kind](answer, output, reference, task)
        return None if found is None else (answer.dump(), *found)
    except (ValueError, RecursionError):  # a document too deep to write back
        return None


def named(edit: Edit, details: Mapping[str, Any]) -> bool:
    """Whether an item of details[edit.detail] mentions one of the markers (case-insensitive,
    whole words; items may be strings or small dicts/lists: search their JSON text)."""
    if not isinstance(details, Mapping) or not edit.markers:
        return False
    items = details.get(edit.detail)
    if items is None:
        return False
    words = "|".join(r"\s+".join(map(re.escape, m.split())) for m in edit.markers)
    pattern = re.compile(rf"(?<!\w)(?:{words})(?!\w)", re.IGNORECASE)
    for item in items if isinstance(items, list | tuple) else [items]:
        if isinstance(item, str):
            text = item
        else:
            try:
                text = json.dumps(item, ensure_ascii=False, default=str)
            except (ValueError, TypeError, RecursionError):
                continue
        if pattern.search(text):
            return True
    return False
