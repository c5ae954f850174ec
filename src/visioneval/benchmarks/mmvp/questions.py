"""One MMVP question as the data holds it, checked: its 1-based Index, the question, the
options string "(a) X (b) Y", the label "(a)" or "(b)", and the pair it belongs to.

Pairs are consecutive Index values (1, 2), (3, 4), ...: the paper's grader counts two
consecutive answer lines as one pair (scripts/gpt_grader.py lines 59-69), lmms-eval groups
by `(Index - 1) // 2` (utils.py lines 162-170) and VLMEvalKit by row 2i and 2i + 1
(multiple_choice.py lines 613-622)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# lmms-eval's option parser (utils.py `_parse_options`, lines 86-90): each "(x)" marker and
# the text up to the next marker, stripped. visioneval reads the options the same way for
# every protocol that needs them one by one.
_OPTION = re.compile(r"\([a-z]\)\s*([^(]+?)(?=\s*\([a-z]\)|$)", re.IGNORECASE)
LETTERS = ("a", "b")


class Skip(ValueError):
    """Why a row is not a question, in one line (the caller names the row). Its own class:
    core.rows' loads the parquet reader, and this module is read when `visioneval --help`
    reads the definition."""


def parse_options(options: str) -> list[str]:
    """The option texts of an "(a) X (b) Y" string, as lmms-eval parses them."""
    return [m.strip() for m in _OPTION.findall(options)]


def label_letter(answer: str) -> str:
    """ "(a)" -> "a"; Skip when the label is not "(a)" or "(b)"."""
    found = answer.strip().lower()
    if found in ("(a)", "(b)"):
        return found[1]
    raise Skip(f"Correct Answer {answer!r} is not (a) or (b)")


def pair_of(index: int) -> int:
    """The 1-based pair of a 1-based Index: 1 and 2 are pair 1."""
    return (index + 1) // 2


@dataclass(frozen=True)
class Question:
    index: int
    question: str
    options: str  # as stored: the paper's prompt uses it verbatim
    answer: str  # "(a)" or "(b)" as stored

    @property
    def pair(self) -> int:
        return pair_of(self.index)

    @property
    def choices(self) -> tuple[str, str]:
        found = parse_options(self.options)
        return found[0], found[1]

    @property
    def letter(self) -> str:
        return label_letter(self.answer)


def checked(index: object, question: object, options: object, answer: object) -> Question:
    """A Question from a row's four values; Skip saying which field is wrong."""
    if isinstance(index, str) and index.strip().isdigit():
        index = int(index)
    if isinstance(index, bool) or not isinstance(index, int) or index < 1:
        raise Skip(f"Index {index!r} is not a whole number from 1")
    for name, value in (("Question", question), ("Options", options),
                        ("Correct Answer", answer)):
        if not isinstance(value, str) or not value.strip():
            raise Skip(f"{name} is empty or not text")
    assert isinstance(question, str) and isinstance(options, str) and isinstance(answer, str)
    if len(parse_options(options)) != 2:
        raise Skip(f"Options {options.strip()!r} does not hold two options (a) ... (b) ...")
    label_letter(answer)
    return Question(index, question, options, answer)
