"""The missing edit: one element the answer mentioned left out (a sentence, or a clause of
its only sentence, or an item of a JSON list), preferring the one whose content words the
reference shares most; the removed part's content words are the markers."""

from __future__ import annotations

import json
import re
from typing import Any

from visioneval.evaluators.edits.structured import Structured, leaves
from visioneval.evaluators.edits.vocabulary import ABBREVIATIONS
from visioneval.evaluators.edits.words import content, forms, pick, singular
from visioneval.excerpts import excerpt

MAX_MARKERS = 12  # content words kept as markers of a removed part

_SENTENCES = re.compile(r"(\n\s*|(?:(?<=[.!?])|(?<=[.!?][\"'”’)\]]))[ \t]+(?:\n\s*)?)")
_LIST_ITEM = re.compile(r"\s*[0-9]{1,3}[.)]")
_CLAUSES = ("; ", ", and ", " and ", ", ")
_TERMINAL = ".!?\"'”’)]"


def _overlap(words: list[str], reference_words: set[str]) -> int:
    return len({singular(w) for w in words} & reference_words)


def _markers_of(words: list[str]) -> list[str]:
    markers: list[str] = []
    for word in words[:MAX_MARKERS]:
        markers += forms(word)
    return markers


def text_missing(output: str, reference: str, task: str) -> tuple[str, str, list[str]] | None:
    """Leave out one sentence, or, with a single sentence of content, one of its clauses."""
    core = output.strip()
    lead = output[:len(output) - len(output.lstrip())]
    trail = output[len(output.rstrip()):]
    pieces = _sentences(core)
    reference_words = {singular(w) for w in content(reference)}
    contents = {i: content(pieces[i]) for i in range(0, len(pieces), 2)}
    full = [i for i, words in contents.items() if words]
    if len(full) >= 2:
        scores = [_overlap(contents[i], reference_words) for i in full]
        index = pick(full, scores, output)
        removed = pieces[index]
        if index == len(pieces) - 1:
            kept = pieces[:index - 1]
        else:
            kept = pieces[:index] + pieces[index + 2:]
        change = f'missing: removed "{excerpt(removed.strip())}"'
        return lead + "".join(kept) + trail, change, _markers_of(contents[index])
    if len(full) != 1:
        return None
    index = full[0]
    sentence = pieces[index]
    shortened = _drop_clause(sentence, reference_words, output)
    if shortened is None:
        return None
    text, removed, words = shortened
    pieces[index] = text
    return (lead + "".join(pieces) + trail, f'missing: removed "{excerpt(removed)}"',
            _markers_of(words))


def _sentences(text: str) -> list[str]:
    """[sentence, separator, sentence, ...]: split after . ! ? and at line ends, but not
    after a list number ("2. A plate") or a common abbreviation ("e.g. a cup")."""
    pieces = _SENTENCES.split(text)
    merged = [pieces[0]]
    for i in range(1, len(pieces), 2):
        last = merged[-1]
        if "\n" not in pieces[i] and (_LIST_ITEM.fullmatch(last)
                                      or f" {last.lower()}".endswith(ABBREVIATIONS)):
            merged[-1] = last + pieces[i] + pieces[i + 1]
        else:
            merged += [pieces[i], pieces[i + 1]]
    return merged


def _drop_clause(sentence: str, reference_words: set[str],
                 output: str) -> tuple[str, str, list[str]] | None:
    """The sentence without one clause, split at the first separator whose every part has
    content ("a black and white cat" is not two clauses); capitalised, with its full stop."""
    body = sentence.rstrip(_TERMINAL)
    terminal = sentence[len(body):] or "."
    for separator in _CLAUSES:
        parts = body.split(separator)
        words = [content(p) for p in parts]
        if len(parts) < 2 or not all(words):
            continue
        index = pick(list(range(len(parts))),
                     [_overlap(w, reference_words) for w in words], output)
        rest = separator.join(parts[:index] + parts[index + 1:]).strip()
        if body[:1].isupper():
            rest = rest[:1].upper() + rest[1:]
        return rest + terminal, parts[index].strip(), words[index]
    return None


def _item_text(item: Any) -> str:
    return " ".join(v for _, _, v in leaves(item) if isinstance(v, str))


def json_missing(answer: Structured, output: str, reference: str,
                 task: str) -> tuple[str, list[str]] | None:
    """One item left out of the first list of two or more items with content, else one
    sentence or clause left out of the first string where that applies."""
    reference_words = {singular(w) for w in content(reference)}
    nodes = leaves(answer.data)
    for _, _, value in nodes:
        if not isinstance(value, list) or len(value) < 2:
            continue
        words = [content(_item_text(item)) for item in value]
        full = [i for i, w in enumerate(words) if w]
        if not full:
            continue
        index = pick(full, [_overlap(words[i], reference_words) for i in full], output)
        removed = value.pop(index)
        shown = removed if isinstance(removed, str) else json.dumps(removed, ensure_ascii=False)
        return f'missing: removed "{excerpt(shown)}" from a list', _markers_of(words[index])
    for container, key, value in nodes:
        if container is not None and isinstance(value, str):
            found = text_missing(value, reference, task)
            if found is not None:
                container[key] = found[0]
                return found[1], found[2]
    return None
