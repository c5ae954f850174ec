"""The prompt of the generic image-question benchmark: the image, then the question, the
options as lettered lines and a suffix (docs/vqa.md gives the exact wording)."""

from __future__ import annotations

from collections.abc import Sequence

from visioneval.benchmarks.vqa.scorers import LETTERS
from visioneval.core.records import Message, user
from visioneval.io.images import Image

# LLaVA's and lmms-eval's multiple-choice instruction (MMBench, SEED-Bench tasks).
CHOICE_SUFFIX = "Answer with the option's letter from the given choices directly."


def suffix(scorer: str, given: str | None) -> str:
    """The suffix the user gave (empty: none), else the scorer's default."""
    if given is not None:
        return given.strip()
    return CHOICE_SUFFIX if scorer == "choice" else ""


def text(question: str, choices: Sequence[str], tail: str) -> str:
    """The question, then "A. option" lines, then the suffix, one per line."""
    lines = [question.strip()]
    lines += [f"{LETTERS[i]}. {option}" for i, option in enumerate(choices)]
    if tail:
        lines.append(tail)
    return "\n".join(lines)


def messages(image: Image, question: str, choices: Sequence[str],
             tail: str) -> tuple[Message, ...]:
    return (user(image, text(question, choices, tail)),)
