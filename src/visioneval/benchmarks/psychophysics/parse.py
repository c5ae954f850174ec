"""Reading an answer: the feature named first (detection; SalBench's lenient rule decides
which feature words count, so "not color but size" is size), or the first yes/no word."""

from __future__ import annotations

import re

from visioneval.benchmarks.psychophysics.params import CHOICE_EXPERIMENTS, FEATURES
from visioneval.benchmarks.salbench.parse import lenient_labels

_YES_NO = re.compile(r"\b(yes|no)\b")
_SPELLING = re.compile(r"\bcolour")


def feature_named_first(text: str) -> str | None:
    """The feature the answer names first, among those it does not deny; None if none."""
    found = lenient_labels(text, FEATURES)
    if not found:
        return None
    said = _SPELLING.sub("color", text.lower())

    def where(feature: str) -> int:
        match = re.search(rf"\b{feature}", said)
        return match.start() if match else len(said)

    return min(sorted(found), key=where)


def yes_or_no(text: str) -> str | None:
    match = _YES_NO.search(text.lower())
    return match.group(1) if match else None


def read(experiment: str, text: str) -> str | None:
    return feature_named_first(text) if experiment in CHOICE_EXPERIMENTS \
        else yes_or_no(text)
