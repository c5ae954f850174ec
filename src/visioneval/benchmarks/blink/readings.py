"""How each protocol reads an answer, as pure functions of (answer text, question).

- `paper`: `analyze_answer` ([P] eval/test_benchmark.py lines 12-44): an answer that is
  exactly "A" ... "E" becomes "(A)" ... (all five letters, whatever the number of options);
  exactly "(A)" ... "(E)" stays; otherwise the option tokens "(A)" ... up to the number of
  options are looked for among the whitespace-separated tokens of the whole answer and of
  its last paragraph (after the last blank line). One token in the last paragraph wins; else
  one in the whole answer; else (none, or several in both) the paper asks gpt-3.5-turbo
  (lines 31-35), which visioneval does not: the answer is unread and scored wrong. No
  stripping: "(B)." is not the token "(B)", and "A\\n" is not "A".
- `lmms_eval`: `_extract_answer_letter` ([L] utils.py lines 10-28): the first letter of the
  stripped reply after any "(" or spaces, upper-cased, whatever it is: "The answer is (B)"
  reads "T".
- `vlmevalkit`: VLMEvalKit's `can_infer` (`visioneval.harness.vlmevalkit.option`) over the
  options: a letter, "Z" (a refusal it knows), or None (its judge model's turn: without a
  judge VLMEvalKit scores it wrong, multiple_choice.py lines 382-383).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from visioneval.benchmarks.blink.questions import LETTERS, Question
from visioneval.benchmarks.blink.spec import UNREAD
from visioneval.harness.vlmevalkit import option


@dataclass(frozen=True)
class Reading:
    """The option token an answer chooses ("(A)" ... or None) and the rule that decided."""

    token: str | None
    how: str


def paper(text: str, q: Question) -> Reading:
    tokens = [f"({letter})" for letter in q.letters]
    if text in tuple(LETTERS):
        return Reading(f"({text})", "bare letter")
    if text in [f"({letter})" for letter in LETTERS]:
        return Reading(text, "bare option")
    whole = set(tokens) & set(text.split())
    last = set(tokens) & set(text.split("\n\n")[-1].split())
    if (len(whole) != 1 and len(last) != 1) or not whole:
        return Reading(None, UNREAD)
    if len(last) == 1:
        return Reading(last.pop(), "the one option in the last paragraph")
    return Reading(whole.pop(), "the one option in the answer")


_FIRST = re.compile(r"[\(\s]*([A-Z])[\)\.\s]*", re.IGNORECASE)


def lmms_eval(text: str) -> str:
    """lmms-eval's letter (any letter A-Z, or "" when the reply starts with none)."""
    match = _FIRST.match(text.strip())
    return match.group(1).upper() if match else ""


def vlmevalkit(text: str, q: Question) -> str | None:
    return option(text, dict(zip(q.letters, q.choices, strict=True)))
