"""The label sets BLINK is scored against: the published `answer` of the Hub copy, and the
same with visioneval's manifest (`corrections.json`) applied. A correction applies only where
the data holds the value it was written for."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from visioneval.harness.corrections import Corrections

MANIFEST = Path(__file__).with_name("corrections.json")
FIELD = "answer"


@cache
def manifest() -> Corrections:
    return Corrections.load(MANIFEST)


def corrected(idx: str, answer: str) -> str:
    return manifest().corrected(idx, FIELD, answer)
