"""BlindTest's label corrections (corrections.json, read by `harness.corrections`)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from visioneval.harness.corrections import Corrections


@cache
def manifest() -> Corrections:
    return Corrections.load(Path(__file__).with_name("corrections.json"))


def corrected(item: str, label: str) -> str:
    return manifest().corrected(item, "groundtruth", label)
