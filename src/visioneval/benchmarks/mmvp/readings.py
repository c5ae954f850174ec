"""How each protocol reads an answer, as pure functions of (answer text, question).

- `paper`: visioneval's rule-based stand-in for the paper's grader. The paper asks
  GPT-4-0314 "does the following answer correctly answer the question" given the correct
  option's letter, and counts only a bare "yes" ([P] scripts/gpt_grader.py lines 19-46, 56).
  The rule below reads which option an answer chooses; the answer is right when that is the
  labelled option. It looks, in this order, and stops at the first step that finds a letter
  or an option:
  1. a stated letter: "answer is (b)", "answer: a", "option B" (the letter followed by the
     end, punctuation or a bracket, so "the answer is a dog" states nothing);
  2. a letter: the reply starts with "a", "(b)", "A.", "b)" or "B:", or holds "(a)"
     anywhere;
  3. an option's text as a whole word or phrase, case ignored ("Yes", "Gravel path"); a
     match inside a longer option's match does not count ("OK" inside "OK/SELECT").
  A step that finds both options decides nothing more: the reply is ambiguous (wrong), except
  in step 3 when the reply begins with one option's text ("No, ... yes ..." chooses No).
  A reply that names no option is unparsed (wrong). It does not read meaning: "not open"
  names "open". The paper's GPT-4 grader reads meaning, and `--judge` asks it (docs).
- `lmms_eval`: lmms-eval's `_extract_answer_letter` ([L] utils.py lines 32-67): five
  case-insensitive patterns in order, then the first character. Pattern 5 has no left word
  boundary, so "There is a dog" reads as A.
- `vlmevalkit`: VLMEvalKit's `can_infer` (shared in `visioneval.harness.vlmevalkit.option`)
  over the options {A: first, B: second}: a letter, "Z" (a refusal it knows), or None (its
  judge model's turn: without a judge VLMEvalKit scores "Z", multiple_choice.py lines 382-383).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from visioneval.benchmarks.mmvp.questions import LETTERS, Question
from visioneval.benchmarks.mmvp.spec import AMBIGUOUS, UNPARSED
from visioneval.harness.vlmevalkit import option

_STATED = re.compile(r"\b(?:answer|option|choice)(?:\s+is)?\s*:?\s*\(?([ab])\)?"
                     r"(?=\s*(?:$|[.,;:!?)\]]))", re.IGNORECASE)
_LEADING = re.compile(r"^[\W_]*?\(?([ab])\)?(?:\s*[.):]|\s*$)", re.IGNORECASE)
_BRACKETED = re.compile(r"\(([ab])\)", re.IGNORECASE)
_QUOTES = "\"'“”‘’"


@dataclass(frozen=True)
class Reading:
    """The option an answer chooses ("a", "b" or None) and the step that decided."""

    letter: str | None
    how: str


def paper(text: str, q: Question) -> Reading:
    """visioneval's reading of an answer to the paper's prompt (see the module's text)."""
    for how, patterns in (("stated letter", (_STATED,)),
                          ("letter", (_LEADING, _BRACKETED))):
        found = {m.group(1).lower() for p in patterns for m in p.finditer(text)}
        if len(found) == 1:
            return Reading(found.pop(), how)
        if found:
            return Reading(None, AMBIGUOUS)
    return _by_text(text, q)


def _by_text(text: str, q: Question) -> Reading:
    spans: dict[str, list[tuple[int, int]]] = {}
    for letter, choice in zip(LETTERS, q.choices, strict=True):
        phrase = choice.strip().strip(_QUOTES).strip()
        if not phrase:
            continue
        pattern = re.compile(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", re.IGNORECASE)
        spans[letter] = [m.span() for m in pattern.finditer(text)]
    named = {}
    for letter, mine in spans.items():
        others = [s for other, found in spans.items() if other != letter for s in found]
        kept = [s for s in mine if not any(o[0] <= s[0] and s[1] <= o[1] and o != s
                                           for o in others)]
        if kept:
            named[letter] = kept
    if len(named) == 1:
        return Reading(next(iter(named)), "option text")
    if not named:
        return Reading(None, UNPARSED)
    lead = len(text) - len(re.sub(r"^[\W_]+", "", text))
    first = [letter for letter, found in named.items() if found[0][0] == lead]
    if len(first) == 1:
        return Reading(first[0], "option text the reply begins with")
    return Reading(None, AMBIGUOUS)


# lmms-eval's patterns, in its order ([L] utils.py lines 50-56).
_LMMS_PATTERNS = (r"^\s*\(?([AB])\)?\.?\s*$", r"^\s*\(?([AB])\)?[\.\s]",
                  r"answer\s+is\s+\(?([AB])\)?", r"option\s+\(?([AB])\)?",
                  r"\(?([AB])\)?(?:\s|$)")


def lmms_eval(text: str) -> str:
    """lmms-eval's letter ("A", "B", or "" when it finds none)."""
    text = text.strip()
    for pattern in _LMMS_PATTERNS:
        match = re.search(pattern, text, flags=re.IGNORECASE)
        if match:
            return match.group(1).upper()
    if text and text[0].upper() in ("A", "B"):
        return text[0].upper()
    return ""


def vlmevalkit(text: str, q: Question) -> str | None:
    """VLMEvalKit's rule-based letter ("A", "B", "Z") or None (its judge's turn)."""
    first, second = q.choices
    return option(text, {"A": first, "B": second})


def upper(letter: str) -> str:
    """A label letter as the harnesses write it: "a" -> "A"."""
    return letter.upper()
