"""The visual pattern of each question (`patterns.json`: PixMMVP's tags, the only published
per-question mapping found; its file says where it comes from and what is odd in it)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import BaseModel

DATA = Path(__file__).with_name("patterns.json")


class PatternFile(BaseModel, frozen=True):
    what: str
    source: str
    sha256: str
    note: str
    patterns: list[str]
    questions: dict[int, int]


@cache
def tags() -> PatternFile:
    return PatternFile.model_validate_json(DATA.read_bytes())


def pattern(index: int) -> str | None:
    """The pattern PixMMVP gives question `index` (None: not tagged)."""
    found = tags().questions.get(index)
    return None if found is None else tags().patterns[found]


def source_line() -> str:
    return f"patterns: PixMMVP's tags ({tags().source}); the MMVP authors publish none per question"
