"""The colour edit: one colour word swapped for a contrasting one the answer does not use
yet ("a blue square" -> "an orange square"), preferring a colour the reference gives; "an
orange" with no noun after it is the fruit and stays."""

from __future__ import annotations

import re

from visioneval.evaluators.edits.structured import Structured, leaves
from visioneval.evaluators.edits.vocabulary import COLOURS
from visioneval.evaluators.edits.words import case_like, first_best, forms, noun_after, word_before
from visioneval.excerpts import excerpt

_COLOUR = re.compile(r"(?<![\w-])(?:" + "|".join(COLOURS) + r")(?![\w-])", re.IGNORECASE)
_ARTICLE = re.compile(r"(?<!\w)(an?)([ \t]+)$", re.IGNORECASE)


def _colour_sites(text: str) -> list[re.Match[str]]:
    sites = []
    for match in _COLOUR.finditer(text):
        if match.group(0).lower() == "orange" and word_before(text, match.start()) in {
                "an", "the", "this", "that", "one", "each", "every"} \
                and noun_after(text, match.end()) is None:
            continue  # "an orange" on the table is the fruit
        sites.append(match)
    return sites


def _canonical(colour: str) -> str:
    return "grey" if colour.lower() == "gray" else colour.lower()


def _apply_colour(text: str, match: re.Match[str]) -> tuple[str, str, list[str]]:
    old = match.group(0)
    used = {_canonical(c) for c in _COLOUR.findall(text)}
    choices = COLOURS[old.lower()]
    new = case_like(old, next((c for c in choices if c not in used), choices[0]))
    start, prefix = match.start(), ""
    article = _ARTICLE.search(text[max(0, start - 10):start])
    if article:  # "a blue square" -> "an orange square"
        start -= len(article.group(0))
        word = "an" if new[:1].lower() in "aeiou" else "a"
        prefix = case_like(article.group(1), word) + article.group(2)
    noun = noun_after(text, match.end())
    end = noun[1] if noun else match.end()
    replacement = prefix + new + text[match.end():end]
    markers = [new] + (forms(text[noun[0]:noun[1]]) if noun else [])
    change = f'colour: "{excerpt(text[start:end])}" -> "{excerpt(replacement)}"'
    return text[:start] + replacement + text[end:], change, markers


def _colour_scores(colours: list[str], reference: str) -> list[int]:
    ref = {_canonical(c) for c in _COLOUR.findall(reference)}
    return [1 if _canonical(c) in ref else 0 for c in colours]


def text_colour(output: str, reference: str, task: str) -> tuple[str, str, list[str]] | None:
    sites = _colour_sites(output)
    if not sites:
        return None
    scores = _colour_scores([m.group(0) for m in sites], reference)
    return _apply_colour(output, sites[first_best(scores)])


def json_colour(answer: Structured, output: str, reference: str,
                task: str) -> tuple[str, list[str]] | None:
    """The first colour word of the string values the reference confirms, else the first."""
    sites = [(container, key, value, match) for container, key, value in leaves(answer.data)
             if isinstance(value, str) for match in _colour_sites(value)]
    if not sites:
        return None
    scores = _colour_scores([s[3].group(0) for s in sites], reference)
    container, key, value, match = sites[first_best(scores)]
    container[key], change, markers = _apply_colour(value, match)
    return change, markers
