"""`count`: are the object counts in the answer the expected ones?

Each number (digits with optional thousands separators, or number words such as "twenty-five"
or "a") is paired with the object that follows it: the last word before a delimiter
(punctuation, "and", a preposition ...), at most four words on, singularised. So
"5 red bottles, 3 cans on the table" gives bottle: 5, can: 3. The score is the share of the
expected (object, count) pairs the answer states with the same count; an object's count is
its first mention. Expected counts without objects ("5") are compared as a multiset of
numbers. Default pass threshold 0.8 (as AgentV's `count_validator.py` uses).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from typing import Any

from visioneval.validators.result import EvalResult

THRESHOLD = 0.8
UNITS = {"zero": 0, "a": 1, "an": 1, "one": 1, "single": 1, "two": 2, "three": 3, "four": 4,
         "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11,
         "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
         "seventeen": 17, "eighteen": 18, "nineteen": 19, "dozen": 12}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
        "eighty": 80, "ninety": 90}
SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
STOP = frozenset({"and", "or", "but", "with", "of", "on", "in", "at", "near", "under", "over",
                  "from", "to", "for", "by", "beside", "behind", "inside", "outside", "next",
                  "while", "which", "that", "are", "is", "were", "was", "there", "each",
                  "per", "plus", "than", "as", "has", "have", "had", "shows", "show", "showed",
                  "contains", "contain", "includes", "include", "appear", "appears"})
VAGUE = frozenset({"lot", "lots", "few", "bit", "number", "bunch", "couple", "variety"})
IRREGULAR = {"people": "person", "children": "child", "men": "man", "women": "woman",
             "mice": "mouse", "geese": "goose", "feet": "foot", "teeth": "tooth",
             "knives": "knife", "leaves": "leaf", "shelves": "shelf", "wolves": "wolf",
             "sheep": "sheep", "fish": "fish", "deer": "deer"}
TOKEN = re.compile(r"[a-z]+\d+\w*|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|[a-z]+(?:-[a-z]+)*"
                   r"|[^\sa-z\d]")
MAX_OBJECT_WORDS = 4


def singular(word: str) -> str:
    if word in IRREGULAR:
        return IRREGULAR[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _number_at(tokens: list[str], i: int) -> tuple[float, int] | None:
    """A number starting at token i and how many tokens it spans."""
    token = tokens[i]
    if token[0].isdigit() and token.replace(",", "").replace(".", "", 1).isdigit():
        return float(token.replace(",", "")), 1
    words: list[list[str]] = []
    span = 0
    for j, part in enumerate(tokens[i:i + 8]):
        pieces = part.split("-")
        if part == "and" and words and words[-1][-1] in SCALES and j + 1 < len(tokens[i:]) \
                and tokens[i + j + 1] in UNITS | TENS:
            span += 1  # "two hundred and five"
            continue
        if not all(p in UNITS or p in TENS or p in SCALES for p in pieces):
            break
        words.append(pieces)
        span += 1
    if not words:
        return None
    total, current = 0, 0
    for pieces in words:
        for piece in pieces:
            if piece in SCALES:
                current = max(current, 1) * SCALES[piece]
                if SCALES[piece] >= 1000:
                    total, current = total + current, 0
            else:
                current += UNITS.get(piece, 0) + TENS.get(piece, 0)
    return float(total + current), span


def extract_counts(text: str) -> list[tuple[str | None, float | int]]:
    """(object, count) pairs in reading order; object None for a bare number."""
    tokens = TOKEN.findall(text.lower())
    pairs, i = [], 0
    while i < len(tokens):
        found = _number_at(tokens, i)
        if found is None:
            i += 1
            continue
        value, span = found
        i += span
        words: list[str] = []
        while i < len(tokens) and len(words) < MAX_OBJECT_WORDS:
            token = tokens[i]
            if not token[0].isalpha() or token in STOP or _number_at(tokens, i):
                break
            words.append(token)
            i += 1
        article = tokens[i - span - len(words)] in ("a", "an", "single")
        if article and not words or words and words[-1] in VAGUE:
            continue  # "a" alone is an article; "a lot of" is not a count
        pairs.append((singular(words[-1]) if words else None, _tidy(value)))
    return pairs


def _tidy(value: float) -> float | int:
    return int(value) if value.is_integer() else value


def _first_by_object(pairs: list[tuple[str | None, float | int]]) -> dict[str, float | int]:
    out: dict[str, float | int] = {}
    for name, value in pairs:
        if name is not None and name not in out:
            out[name] = value
    return out


def validate(output: str, expected_output: str, input_text: str = "",
             threshold: float = THRESHOLD, **_: Any) -> dict[str, Any]:
    expected = extract_counts(expected_output)
    if not expected:
        return EvalResult.error("expected_output states no count").model_dump()
    stated = extract_counts(output)
    want, have = _first_by_object(expected), _first_by_object(stated)
    if want:
        matched = sorted(o for o, v in want.items() if have.get(o) == v)
        wrong = {o: {"expected": v, "found": have[o]} for o, v in want.items()
                 if o in have and have[o] != v}
        missing = sorted(o for o in want if o not in have)
        score = len(matched) / len(want)
        return EvalResult.processed(score, threshold, expected=want, found=have,
                                    matched=matched, wrong=wrong, missing=missing).model_dump()
    want_numbers = Counter(v for _, v in expected)
    have_numbers = Counter(v for _, v in stated)
    common = sum((want_numbers & have_numbers).values())
    return EvalResult.processed(common / sum(want_numbers.values()), threshold,
                                expected=sorted(want_numbers.elements()),
                                found=sorted(have_numbers.elements())).model_dump()


if __name__ == "__main__":
    from visioneval.validators.protocol import main

    sys.exit(main(validate))
