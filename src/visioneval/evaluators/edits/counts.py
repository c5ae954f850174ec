"""The count edit: one count of things in the answer raised by one ("three cups" -> "four
cups", `"people_count": 2` -> 3), preferring a count the reference gives and never one it
contradicts; labels ("image 2"), measures ("5 pm"), list numbers and decimals are no counts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from visioneval.evaluators.edits.structured import Structured, leaves
from visioneval.evaluators.edits.vocabulary import LABELS, NUMBER_WORDS, STOP, UNITS
from visioneval.evaluators.edits.words import (
    NEXT_WORD,
    case_like,
    first_best,
    forms,
    is_plural,
    noun_after,
    plural,
    singular,
    word_before,
)
from visioneval.excerpts import excerpt

_COUNT = re.compile(
    r"(?<![\w.,:/$€£#-])(?:(?P<digits>[0-9]{1,3})|(?P<word>"
    + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
    + r"))(?![\w%°-]|[.,:/][0-9])", re.IGNORECASE)
_LIST_NUMBER = re.compile(r"[.)][ \t]+\S")
_COUNT_KEY_WORDS = frozenset({"count", "counts", "number", "num", "total", "quantity", "n",
                              "how", "many"})


@dataclass(frozen=True)
class _Count:
    start: int
    end: int
    value: int
    digits: bool
    noun: tuple[int, int] | None


def _count_sites(text: str) -> list[_Count]:
    """Counts in `text`, in order: digits or number words, not labels, measures, list
    numbers, decimals or the pronoun "one"."""
    sites = []
    for match in _COUNT.finditer(text):
        written = match.group(0)
        digits = match.group("digits") is not None
        before = word_before(text, match.start())
        after = NEXT_WORD.match(text, match.end())
        next_word = after.group(1).lower() if after else ""
        if before in LABELS or next_word in UNITS:
            continue
        if digits:
            line_start = text.rfind("\n", 0, match.start()) + 1
            if not text[line_start:match.start()].strip() and _LIST_NUMBER.match(text,
                                                                                  match.end()):
                continue  # "1. A cat ..." numbers a list
        elif written.lower() == "one" and (
                before in {"the", "this", "that", "which", "each", "every", "any", "no",
                           "another", "other", "only", "single"}
                or next_word in {"of", "another"}):
            continue
        value = int(written) if digits else NUMBER_WORDS.index(written.lower()) + 1
        sites.append(_Count(match.start(), match.end(), value, digits,
                            noun_after(text, match.end())))
    return sites


def _count_key(text: str, site: _Count) -> tuple[int, str]:
    noun = text[site.noun[0]:site.noun[1]].lower() if site.noun else ""
    return site.value, singular(noun)


def _count_scores(keys: list[tuple[int, str]], reference: str) -> list[int]:
    """Per (number, noun): 2 when the reference gives that count of that noun, 1 when it
    gives the number alone, -1 when it gives another count of that noun: that count is
    wrong already, and raising it would not make a right statement wrong."""
    ref = {_count_key(reference, s) for s in _count_sites(reference)}
    values = {value for value, _ in ref}
    counted = {noun for _, noun in ref if noun}
    return [2 if key in ref else -1 if key[1] and key[1] in counted else
            1 if key[0] in values else 0 for key in keys]


def _number_word(value: int) -> str:
    """1 to 21 in words; "" for other numbers."""
    if 1 <= value <= len(NUMBER_WORDS):
        return NUMBER_WORDS[value - 1]
    return "twenty-one" if value == 21 else ""


def _number_written(value: int, digits: bool, like: str) -> str:
    """`value` as the edited count was written: digits, or words in its case."""
    return str(value) if digits else case_like(like, _number_word(value))


def _apply_count(text: str, site: _Count) -> tuple[str, str, list[str]]:
    new_value = site.value + 1
    old = text[site.start:site.end]
    new = _number_written(new_value, site.digits, old)
    markers = [new, _number_word(new_value) if site.digits else str(new_value)]
    end = site.end
    tail = ""
    if site.noun:
        end = site.noun[1]
        noun = text[site.noun[0]:site.noun[1]]
        tail = text[site.end:site.noun[1]]
        if site.value == 1 and not is_plural(noun.lower()):
            tail = text[site.end:site.noun[0]] + case_like(noun, plural(noun.lower()))
        markers += forms(noun)
    edited = text[:site.start] + new + tail + text[end:]
    change = f'count: "{excerpt(text[site.start:end])}" -> "{excerpt(new + tail)}"'
    return edited, change, markers


def text_count(output: str, reference: str, task: str) -> tuple[str, str, list[str]] | None:
    sites = _count_sites(output)
    if not sites:
        return None
    scores = _count_scores([_count_key(output, s) for s in sites], reference)
    if max(scores) < 0:  # every count is one the reference contradicts
        return None
    return _apply_count(output, sites[first_best(scores)])


def _count_key_noun(key: Any) -> str | None:
    """For an integer under `key`: "" when the key names a count without a noun ("count"),
    the noun when it names one ("people_count", "cars"), None when it is no count ("x")."""
    if not isinstance(key, str):
        return None
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", key)]
    nouns = [w for w in words if w not in _COUNT_KEY_WORDS and w not in STOP]
    if any(w in _COUNT_KEY_WORDS for w in words):
        return nouns[-1] if nouns else ""
    if len(words) == 1 and nouns and is_plural(nouns[0]):
        return nouns[0]
    return None


def json_count(answer: Structured, output: str, reference: str,
               task: str) -> tuple[str, list[str]] | None:
    """A count in a string value, or an integer under a key that names a count."""
    sites: list[tuple[Any, Any, Any, _Count | None]] = []
    keys: list[tuple[int, str]] = []
    for container, key, value in leaves(answer.data):
        if isinstance(value, str):
            for found in _count_sites(value):
                sites.append((container, key, value, found))
                keys.append(_count_key(value, found))
        elif isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1000:
            noun = _count_key_noun(key)
            if noun is not None:
                sites.append((container, key, value, None))
                keys.append((value, singular(noun)))
    if not sites:
        return None
    scores = _count_scores(keys, reference)
    if max(scores) < 0:
        return None
    container, key, value, site = sites[first_best(scores)]
    if site is not None:
        container[key], change, markers = _apply_count(value, site)
        return change, markers
    container[key] = value + 1
    noun = _count_key_noun(key) or ""
    return (f'count: "{key}": {value} -> {value + 1}',
            [str(value + 1), _number_word(value + 1)] + forms(noun))
