"""The answer scorers of the generic image-question benchmark, as pure functions.

Each takes the model's text and the row's target (and choices, tolerance) and returns a
`Verdict`: what was read from the answer (`parsed`, None when nothing could be read) and
whether it is right. An answer nothing could be read from is `unparsed` (wrong for
accuracy, and counted); an answer naming two different options is `ambiguous` (unparsed
too, counted apart). The rules are written down in docs/vqa.md.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from visioneval.metrics.labelsets import sample_scores

LETTERS = string.ascii_uppercase
# Stripped from both ends of an answer (inner punctuation such as "3.5" or "u.s" stays).
END_PUNCTUATION = string.punctuation + "“”‘’«»…"
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Verdict:
    parsed: Any  # what was read from the answer; None: nothing
    correct: bool
    unparsed: bool = False
    ambiguous: bool = False

    def scores(self) -> dict[str, float]:
        return {"correct": float(self.correct), "unparsed": float(self.unparsed),
                "ambiguous": float(self.ambiguous)}


def normalise(text: str) -> str:
    """Lowercase, punctuation stripped from both ends, the articles a/an/the dropped as
    words, whitespace collapsed (SQuAD's answer normalisation, without its removal of inner
    punctuation, so "3.5" stays a number)."""
    text = text.lower().strip().strip(END_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return _SPACES.sub(" ", text).strip().strip(END_PUNCTUATION).strip()


# -- exact ----------------------------------------------------------------------------------

def exact(answer: str, target: Any) -> Verdict:
    """The normalised answer equals the normalised target (any of them, for a list)."""
    said = normalise(answer)
    if not said:
        return Verdict(None, False, unparsed=True)
    targets = target if isinstance(target, list | tuple) else [target]
    return Verdict(said, any(said == normalise(str(t)) for t in targets))


# -- choice ---------------------------------------------------------------------------------

def option_index(target: Any, choices: Sequence[str]) -> int | None:
    """Which option a target names: its text (normalised), else its letter ("B"), else a
    0-based integer index; None when it names none."""
    if isinstance(target, bool):
        return None
    if isinstance(target, int):
        return target if 0 <= target < len(choices) else None
    text = str(target).strip()
    wanted = normalise(text)
    matches = [i for i, c in enumerate(choices) if normalise(c) == wanted]
    if len(matches) == 1:
        return matches[0]
    letter = text.strip("()[]. ").upper()
    if len(letter) == 1 and letter in LETTERS[:len(choices)]:
        return LETTERS.index(letter)
    return None


_ALONE = re.compile(r"^[\(\[]?\s*([A-Za-z])\s*[\)\]]?[.:)]?$")
# The keyword in any case, the letter in capitals ("the answer is a circle" names no option).
_STATED = re.compile(r"\b(?i:answer|option|choice)\b(?:\s+(?i:is|would\s+be|should\s+be))?"
                     r"\s*[:\-]?\s*[\(\[]?([A-Z])[\)\]]?(?![\w'])")
_LEADING = re.compile(r"^[\(\[]?([A-Z])(?:[\)\]]|[.:](?=\s|$))")
_BRACKETED = re.compile(r"[\(\[]([A-Z])[\)\]]")
_LETTER_LIST = re.compile(r"^[\(\[]?[A-Z][\)\]]?(?:\s*(?:,|/|\bor\b|\band\b|&)\s*"
                          r"[\(\[]?[A-Z][\)\]]?)+[.]?$", re.IGNORECASE)


def _letters(found: list[str], n: int) -> list[int]:
    """Distinct option indices among found letters, in range, in order of appearance."""
    out: list[int] = []
    for letter in found:
        index = LETTERS.find(letter.upper())
        if 0 <= index < n and index not in out:
            out.append(index)
    return out


def _by_text(answer: str, choices: Sequence[str]) -> list[int]:
    """Options whose text the answer is, else options whose text it contains as words (an
    option inside a longer found option, "red" in "dark red", does not count)."""
    said = normalise(answer)
    texts = [normalise(c) for c in choices]
    equal = [i for i, t in enumerate(texts) if t and t == said]
    if equal:
        return equal
    found = [i for i, t in enumerate(texts)
             if t and re.search(rf"(?<!\w){re.escape(t)}(?!\w)", said)]
    return [i for i in found
            if not any(j != i and texts[i] != texts[j] and texts[i] in texts[j] for j in found)]


def extract_choice(answer: str, choices: Sequence[str]) -> tuple[int | None, bool]:
    """(option index, ambiguous). The first rule that finds anything decides; a rule that
    finds two different options makes the answer ambiguous:
    1. the answer is a letter alone: "B", "b", "(B)", "B.", "[B]", "B)";
    2. letters only, joined by or/and/commas/slashes ("B or C", "(A) or (C)"): ambiguous;
    3. a stated answer: "Answer: B", "The answer is (C)", "the correct option is D";
    4. a leading letter: "B. red", "(B) red", "B) red", "B: red";
    5. an option's text: the whole answer, else found as words inside it;
    6. a bracketed letter anywhere: "I would pick (B) because ...".
    Letters outside the options (E when there are four) are ignored."""
    text = answer.strip().strip("*` \n")
    n = len(choices)
    alone = _ALONE.match(text)
    if alone and _letters([alone.group(1)], n):
        return _letters([alone.group(1)], n)[0], False
    if _LETTER_LIST.match(text) and len(_letters(re.findall(r"\b[A-Za-z]\b", text), n)) > 1:
        return None, True
    for rule in (_STATED.findall(text), _LEADING.findall(text)):
        found = _letters(rule, n)
        if found:
            return (found[0], False) if len(found) == 1 else (None, True)
    for found in (_by_text(text, choices), _letters(_BRACKETED.findall(text), n)):
        if found:
            return (found[0], False) if len(found) == 1 else (None, True)
    return None, False


def choice(answer: str, choices: Sequence[str], target: int) -> Verdict:
    """The option the answer names (as its letter) against the target option's index."""
    index, ambiguous = extract_choice(answer, choices)
    if index is None:
        return Verdict(None, False, unparsed=True, ambiguous=ambiguous)
    return Verdict(LETTERS[index], index == target)


# -- set ------------------------------------------------------------------------------------

def labels(value: Any) -> set[str]:
    """A label set: a list, or text split on commas; each label normalised, empties dropped."""
    pieces = value if isinstance(value, list | tuple) else str(value).split(",")
    return {p for p in (normalise(str(v)) for v in pieces) if p}


def label_set(answer: str, target: Any) -> tuple[Verdict, dict[str, float]]:
    """The answer's labels against the target's: exact match of the sets, and the per-sample
    F1 SalBench computes (`metrics.labelsets.sample_scores`). Unparsed: no label at all."""
    predicted, gold = labels(answer), labels(target)
    if not predicted:
        return Verdict([], False, unparsed=True), {"exact_match": 0.0, "sample_f1": 0.0}
    scored = sample_scores(predicted, gold)
    return Verdict(sorted(predicted), scored["exact_match"] == 1.0), scored


# -- number ---------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
                     r"(?:[eE][-+]?\d+)?(?!\d)")
_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen", "twenty")
_WORD_NUMBER = re.compile(rf"\b({'|'.join(_WORDS)})\b", re.IGNORECASE)


def first_number(text: str) -> float | None:
    """The first number written in digits ("1,234.5", "-3", "2e3"), else the first number
    word from zero to twenty; None when there is neither."""
    match = _NUMBER.search(text)
    if match:
        try:
            return float(match.group(0).replace(",", ""))
        except ValueError:
            pass
    word = _WORD_NUMBER.search(text)
    return float(_WORDS.index(word.group(1).lower())) if word else None


def target_number(target: Any) -> float | None:
    """A target as a number (a number, or text holding one); None when it is not one."""
    if isinstance(target, bool):
        return None
    if isinstance(target, int | float):
        return float(target) if math.isfinite(target) else None
    return first_number(str(target))


def number(answer: str, target: float, tolerance: float) -> Verdict:
    """The answer's first number within `tolerance` of the target, relative to the target
    (|a - t| <= tolerance * |t|; for a target of 0, |a| <= tolerance)."""
    said = first_number(answer)
    if said is None:
        return Verdict(None, False, unparsed=True)
    limit = tolerance * abs(target) if target != 0 else tolerance
    return Verdict(said, abs(said - target) <= limit + 1e-12)
