"""The two answer parsers. Both run on every response and both are stored.

`strict` is the reference rule (lmms-eval `p3_process_results`/`o3_process_results`):
lowercase, strip "[" then "]" from the ends, split on commas, strip each piece; the set of
pieces is the prediction, extra words and punctuation included ("Color." is not "color").

`lenient` forgives answer format but not content: case, punctuation, markdown, "colour",
plurals, "and"/newline/semicolon separators and extra words; a class word never matches
inside another word ("colorful") and a negated one ("not color") is left out.

Target-absent control rows (visioneval's, not SalBench's: `data synth-salbench
--target-absent`) have the answer "None": no feature differs. `rejects` says when a parsed
answer agrees.
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


ABSENT_ANSWER = "None"
"""The answer of a target-absent control row; the reference rule reads it as the piece
"none", which is no class of P3 or O3."""


_ABSENT_LABELS = frozenset({"none"})  # target_labels(ABSENT_ANSWER)


def target_absent(answer: str) -> bool:
    """Whether a row's answer says that no feature differs (a target-absent control row).
    Asked of every record: a class answer is turned away by the substring test."""
    return "none" in answer.lower() and target_labels(answer) == _ABSENT_LABELS


def rejects(parser: str, pred: set[str]) -> bool:
    """Whether a parsed answer says that no feature differs (a correct rejection on a
    target-absent row). strict: the reference rule's exact match with "None" (so "none"
    alone; "None." or "no feature" name no feature yet are not a rejection either: they are
    unparsed, as such replies are on the other rows). lenient: the answer names no class
    ("None", "no feature differs", "they are all the same")."""
    return pred == (_ABSENT_LABELS if parser == "strict" else set())


_SPELLINGS = {"colour": "color", "colours": "color", "colors": "color", "sizes": "size",
              "orientations": "orientation", "shapes": "shape", "locations": "location",
              "patterns": "pattern"}
_CLAUSE_SPLIT = re.compile(r"[,;:\n/|&]|\band\b|\bor\b|(?<=[a-z\)\]\*])\.(?:\s|$)")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_NEGATORS = frozenset({"not", "no", "neither", "nor", "without", "isn't", "aren't", "doesn't",
                       "don't", "never", "except"})
_CONTRAST = frozenset({"but", "instead", "rather"})
# "X is not ...", "X doesn't ...": a negated verb after the class word denies it.
_AUXILIARIES = frozenset({"is", "are", "was", "were", "does", "do", "did", "has", "have",
                          "can", "could", "will", "would", "should", "seems", "seem"})
_NEGATED_VERBS = frozenset({"isn't", "aren't", "wasn't", "weren't", "doesn't", "don't",
                            "didn't", "hasn't", "haven't", "can't", "cannot", "won't"})
# "the same color", "sizes are identical": the class is shared, not the difference.
_SAME = frozenset({"same", "similar", "identical", "equal", "alike"})
# Descriptive mentions: "in the top-left location", "at location given by ...".
_PREP_ALWAYS = frozenset({"at", "near", "within"})
_PREP_WITH_PHRASE = frozenset({"in", "on"})
_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "its", "their"})
_DIFFERENCE = frozenset({"different", "differing", "distinct", "unique", "odd", "other",
                         "special", "unusual", "contrasting", "changed", "varying", "varied"})


def lenient_labels(text: str, classes: Sequence[str]) -> set[str]:
    """Class words found in the answer, one clause at a time, leaving out the ones that are
    denied ("not color", "color is not ...", "the same color") or only describe where or
    which object ("in the top-left location")."""
    vocabulary = set(classes)
    cleaned = re.sub(r"[*_`#>\"]", " ", text.lower().replace("\u2019", "'"))
    found: set[str] = set()
    for clause in _CLAUSE_SPLIT.split(cleaned):
        words = _WORD.findall(clause)
        labels = [_SPELLINGS.get(w, w) for w in words]
        negated, same_at = False, -10
        for i, word in enumerate(words):
            if word in _CONTRAST:  # "not size but color": the negation ends here
                negated, same_at = False, -10
                continue
            if word in _NEGATORS:
                negated = True
                continue
            if word in _SAME:
                same_at = i
                continue
            label = labels[i]
            if label not in vocabulary:
                continue
            same = i - same_at <= 3  # "the same color", not "the same object ... color"
            denied = negated ^ same ^ _denied_after(words, labels, i, vocabulary)
            if not denied and not _descriptive(words, i, vocabulary):
                found.add(label)
    return found


def _denied_after(words: list[str], labels: list[str], i: int, vocabulary: set[str]) -> bool:
    """A negated verb ("is not", "doesn't") or a sameness word after the class word at `i`,
    before the next class word or contrast, denies it; both together ("is not the same")
    affirm it."""
    negated = same = False
    for k in range(i + 1, len(words)):
        word = words[k]
        if labels[k] in vocabulary or word in _CONTRAST:
            break
        if word in _NEGATED_VERBS or (word in ("not", "never") and words[k - 1] in _AUXILIARIES):
            negated = True
        elif word in _SAME:
            same = True
    return negated ^ same


def _descriptive(words: list[str], i: int, vocabulary: set[str]) -> bool:
    """The class word at `i` heads a place phrase: "at [the ...] location", or "in/on" with
    a determiner and a modifier ("in the top-left location"), not "in color" or "in the
    color", and never a phrase that says the class differs ("at a different location")."""
    j = i - 1
    modifiers: list[str] = []
    while (j >= 0 and len(modifiers) < 3 and words[j] not in _DETERMINERS
           and words[j] not in _PREP_ALWAYS | _PREP_WITH_PHRASE
           and _SPELLINGS.get(words[j], words[j]) not in vocabulary):
        modifiers.append(words[j])
        j -= 1
    determiner = j >= 0 and words[j] in _DETERMINERS
    j -= determiner
    preposition = words[j] if j >= 0 else None
    if any(m in _DIFFERENCE for m in modifiers):
        return False
    if preposition in _PREP_ALWAYS:
        return True
    return preposition in _PREP_WITH_PHRASE and determiner and bool(modifiers)
