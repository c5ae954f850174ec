"""The two answer parsers. Both run on every response and both are stored.

`strict` is the reference rule (lmms-eval `p3_process_results`/`o3_process_results`):
lowercase, strip "[" then "]" from the ends, split on commas, strip each piece; the set of
pieces is the prediction, extra words and punctuation included ("Color." is not "color").

`lenient` forgives answer format but not content: case, punctuation, markdown, "colour",
plurals, "and"/newline/semicolon separators and extra words; a class word never matches
inside another word ("colorful") and a negated one ("not color") is left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def strict_tokens(text: str) -> set[str]:
    """The reference prediction set, byte for byte."""
    return {piece.strip() for piece in text.lower().strip("[").strip("]").split(",")}


def target_labels(answer: str) -> set[str]:
    """The reference ground-truth set: the answer lowercased, split on commas, stripped."""
    return {piece.strip() for piece in answer.lower().split(",")}


_SPELLINGS = {"colour": "color", "colours": "color", "colors": "color", "sizes": "size",
              "orientations": "orientation", "shapes": "shape", "locations": "location",
              "patterns": "pattern"}
_CLAUSE_SPLIT = re.compile(r"[,;\n/|&]|\band\b|\bor\b|(?<=[a-z\)\]\*])\.(?:\s|$)")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_NEGATORS = frozenset({"not", "no", "neither", "nor", "without", "isn't", "aren't", "doesn't",
                       "don't", "never", "except"})
_CONTRAST = frozenset({"but", "instead", "rather"})


def lenient_labels(text: str, classes: Sequence[str]) -> set[str]:
    """Class words found in the answer, one clause at a time, skipping negated ones."""
    vocabulary = set(classes)
    cleaned = re.sub(r"[*_`#>\"]", " ", text.lower())
    found: set[str] = set()
    for clause in _CLAUSE_SPLIT.split(cleaned):
        negated = False
        for word in _WORD.findall(clause):
            if word in _CONTRAST:  # "not size but color": the negation ends here
                negated = False
                continue
            if word in _NEGATORS:
                negated = True
                continue
            label = _SPELLINGS.get(word, word)
            if label in vocabulary and not negated:
                found.add(label)
    return found
