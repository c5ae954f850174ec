"""Word helpers the edit rules share: a noun's other number, a word in another's case, the
content words of a text, the noun a number or colour describes, and the seeded choice
between equal candidates (a hash of the output, so the same output gets the same edit)."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from visioneval.evaluators.edits.vocabulary import (
    ADJECTIVES,
    COLOURS,
    IRREGULAR,
    NUMBER_WORDS,
    SINGULAR,
    STOP,
)

_WORD = r"[^\W\d_]+(?:['’][^\W\d_]+)?"
NEXT_WORD = re.compile(r"[ \t]+(" + _WORD + ")")
_LAST_WORD = re.compile(r"(" + _WORD + r")[ \t]*\(?$")
_CONTENT = re.compile(_WORD)


def case_like(original: str, new: str) -> str:
    """`new` written in the case of `original` (THREE, Three, three)."""
    if len(original) > 1 and original.isupper():
        return new.upper()
    if original[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def plural(word: str) -> str:
    if word in IRREGULAR:
        return IRREGULAR[word]
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if len(word) > 1 and word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def is_plural(word: str) -> bool:
    return word in SINGULAR or (len(word) > 2 and word.endswith("s")
                                and not word.endswith(("ss", "us", "is", "ous")))


def singular(word: str) -> str:
    if word in SINGULAR:
        return SINGULAR[word]
    if not is_plural(word):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    return word[:-1]


def forms(word: str) -> list[str]:
    """A noun as written and in its other number, stop words left out ("cans" gives "cans",
    not the modal "can")."""
    word = word.lower()
    if not word:
        return []
    if is_plural(word):
        other = singular(word)
    elif word in ADJECTIVES or (len(word) > 4 and word.endswith(("ed", "ing", "ly", "ous",
                                                                  "ful"))):
        other = word  # an adjective or verb has no plural ("potted")
    else:
        other = plural(word)
    return list(dict.fromkeys(w for w in (word, other) if w not in STOP))


def content(text: str) -> list[str]:
    """The words that carry content: no stop words, numbers or colour words."""
    words = (w.lower() for w in _CONTENT.findall(text))
    return list(dict.fromkeys(w for w in words if len(w) > 2 and w not in STOP
                              and w not in NUMBER_WORDS and w not in COLOURS))


def noun_after(text: str, pos: int) -> tuple[int, int] | None:
    """The span of the noun described by the number or colour ending at `pos`: the first of
    the next few words that is not a colour or an adjective, unless a stop word comes first."""
    for _ in range(4):
        match = NEXT_WORD.match(text, pos)
        if match is None:
            return None
        word = match.group(1).lower()
        if word in COLOURS or word in ADJECTIVES:
            pos = match.end()
            continue
        if word in STOP or word in NUMBER_WORDS:
            return None
        return match.span(1)
    return None


def word_before(text: str, pos: int) -> str:
    match = _LAST_WORD.search(text[max(0, pos - 40):pos])
    return match.group(1).lower() if match else ""


def digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def first_best(scores: list[int]) -> int:
    """The index of the first highest score: the first candidate unless the reference
    confirms a later one."""
    return scores.index(max(scores))


def pick(candidates: list[Any], scores: list[int], output: str) -> Any:
    """The first best-scored candidate; with no score above 0, one chosen by the output's
    hash (the same output always gets the same one)."""
    best = max(scores)
    if best > 0:
        return candidates[scores.index(best)]
    return candidates[int.from_bytes(digest(output)[:8], "big") % len(candidates)]
