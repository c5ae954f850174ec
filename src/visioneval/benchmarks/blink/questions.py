"""One BLINK question as the run uses it, checked from a dataset row (a bad field is one
line naming it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from visioneval.core.rows import Skip

LETTERS = "ABCDE"  # [P] test_benchmark.py line 70: at most five options
_LABEL = re.compile(r"^\(([A-E])\)$")


@dataclass(frozen=True)
class Question:
    idx: str
    task: str
    question: str
    choices: tuple[str, ...]
    answer: str  # "(A)" ... as the data stores it
    prompt: str

    @property
    def letters(self) -> str:
        return LETTERS[:len(self.choices)]

    @property
    def letter(self) -> str:
        return self.answer.strip("()")


def checked(task: str, values: dict[str, Any]) -> Question:
    """The row's question, or Skip naming the field that cannot be used."""
    idx = values.get("idx")
    if not isinstance(idx, str) or not idx.strip():
        raise Skip("field 'idx' is empty")
    for name in ("question", "prompt", "answer"):
        if not isinstance(values.get(name), str):
            raise Skip(f"{idx}: field {name!r} is not text")
    choices = values.get("choices")
    if not isinstance(choices, (list, tuple)) or not 2 <= len(choices) <= len(LETTERS) \
            or not all(isinstance(c, str) for c in choices):
        raise Skip(f"{idx}: field 'choices' is not a list of 2 to 5 texts")
    answer = str(values["answer"]).strip()
    found = _LABEL.match(answer)
    if answer == "hidden":
        raise Skip(f"{idx}: the answer is hidden (a test row)")
    if found is None or found.group(1) not in LETTERS[:len(choices)]:
        raise Skip(f"{idx}: field 'answer' is {answer!r}, not one of its options (A) ... "
                   f"({LETTERS[len(choices) - 1]})")
    return Question(idx.strip(), task, str(values["question"]), tuple(choices), answer,
                    str(values["prompt"]))
