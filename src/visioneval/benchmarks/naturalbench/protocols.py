"""The paper's and the harnesses' prompt, answer extraction and labels, as pure functions.

All three implementations read an answer the same way ([R] naturalbench_vqa.py:9-48,
[L] utils.py:106-145, [V] utils/naturalbench.py:4-43): find the first whole-word,
case-insensitive occurrence of each of the two answer words ("yes"/"no", or "A"/"B"), and
take the one that comes first; 1 for yes/A, 0 for no/B, -1 when neither occurs. Since the
search ignores case, the article "a" is the answer A ("a dog, so B" reads A). The only
difference between the protocols is the prompt: the paper glues the suffix to the question
([R] line 158), lmms-eval ([L] utils.py:155,157) and VLMEvalKit ([V] image_mcq.py:1407)
put a space between them.
"""

from __future__ import annotations

import re
from functools import cache

from visioneval.benchmarks.naturalbench.spec import LABELS, SUFFIX, WORDS

UNPARSED = -1


def prompt(question: str, question_type: str, family: str) -> str:
    """The text sent with the image: the paper's (`family` "paper") or the harnesses'."""
    glue = "" if family == "paper" else " "
    return question + glue + SUFFIX[question_type]


@cache
def _word(word: str) -> re.Pattern[str]:
    return re.compile(r"\b" + re.escape(word) + r"\b", re.IGNORECASE)


def extract_answer(text: str, question_type: str) -> int:
    """1 (yes / A), 0 (no / B) or -1 (neither word occurs), as the reference code reads it:
    the earlier of the two first whole-word matches wins."""
    first, second = WORDS[question_type]
    at_first = _word(first).search(text)
    at_second = _word(second).search(text)
    if at_first is None and at_second is None:
        return UNPARSED
    if at_first is None:
        return 0
    if at_second is None:
        return 1
    return 1 if at_first.start() < at_second.start() else 0


def answer_label(code: int, question_type: str) -> str:
    """How an extracted answer is shown: Yes/No or A/B, "" when nothing was read."""
    return LABELS[question_type][code] if code in (0, 1) else ""


_LEADING = re.compile(r"^\W*(yes|no|a|b)\b", re.IGNORECASE)


def read_label(value: object, question_type: str) -> int | None:
    """An answer column's cell as 1 or 0 ("Yes"/"No" for yes-no questions, "A"/"B" for
    multiple choice, any case, a leading bracket or trailing text allowed); None when it
    is neither."""
    if not isinstance(value, str):
        return None
    match = _LEADING.match(value.strip())
    if match is None:
        return None
    word = match.group(1).lower()
    first, second = (w.lower() for w in WORDS[question_type])
    return 1 if word == first else 0 if word == second else None
