r"""Each protocol's prompt and answer reading, as pure functions (reference file and line on
each).

- paper: the dataset's `prompt`, a newline, then "Answer with the option's letter from the
  given choices directly." ([P] eval/eval/ade/ade_eval.py:35-36, default at :133; the same
  in coco_eval.py and omni_eval.py). Reading, `extract_mcq_answer` ([P] ade_test.py:21-31):
  lower-case and strip; for each of "answer is", "answer is:", "answer:" in that order, keep
  what follows its last occurrence; strip, drop trailing "." (Omni3D: trailing ".", ":" and
  ",", omni_test.py:28), leading "(" and trailing ")"; keep the first character. Right when
  it equals the gold letter (ade_test.py:52-55); Omni3D also accepts the gold option's own
  text (omni_test.py:66-71), which a one-character reading only matches for a one-character
  option.
- lmms-eval: "Note: You only need to respond with A, B, ... without providing any
  additional information.\n", then "\n", then the prompt ([L] utils.py:27-34,
  _default_template_yaml:18). Reading `_extract_answer_letter` ([L] utils.py:6-24):
  `re.match` of `[\(\s]*([A-Z])[\)\.\s]*` ignoring case on the stripped reply: the first
  letter of the reply, whatever word it starts ("The answer is B" reads T).
- vlmevalkit: the prompt alone ([V] image_mcq.py:1207-1223). Reading: `can_infer`
  (`visioneval.harness.vlmevalkit.option`) over the item's options; nothing inferred is
  its judge model's turn, without one "Z", wrong (multiple_choice.py:380-383).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from visioneval.benchmarks.cvbench.spec import LMMS_PRE_PROMPT, PAPER_EXTENSION
from visioneval.harness.vlmevalkit import option_without_judge

_GOLD = re.compile(r"^\s*\(([A-Za-z])\)\s*$")
_LMMS = re.compile(r"[\(\s]*([A-Z])[\)\.\s]*", re.IGNORECASE)
_ANSWER_KEYWORDS = ("answer is", "answer is:", "answer:")  # [P] ade_test.py:23


def letters(choices: Sequence[str]) -> list[str]:
    """The option letters of an item: A, B, ... one per choice."""
    return [chr(65 + i) for i in range(len(choices))]


def gold_letter(answer: str, choices: Sequence[str]) -> str:
    """"(B)" -> "B"; ValueError when the answer is no bracketed letter of the options."""
    match = _GOLD.match(answer)
    if match is None:
        raise ValueError(f"answer {answer!r} is not a bracketed letter like (A)")
    letter = match.group(1).upper()
    if letter not in letters(choices):
        raise ValueError(f"answer {answer!r} names no option (the item has "
                         f"{len(choices)} choices)")
    return letter


def prompt(protocol: str, dataset_prompt: str, choices: Sequence[str]) -> str:
    """The text each protocol sends with the image."""
    if protocol == "paper":
        return f"{dataset_prompt}\n{PAPER_EXTENSION}"
    if protocol == "lmms-eval":
        return LMMS_PRE_PROMPT.format(", ".join(letters(choices))) + "\n" + dataset_prompt
    return dataset_prompt


@dataclass(frozen=True)
class Reading:
    """What a protocol read (`shown`: an option letter, or "" when it read none) and its
    verdict against the gold letter."""

    shown: str
    correct: bool


def paper_text(text: str, source: str) -> str:
    """`extract_mcq_answer` of the paper's scripts: the one character (or "") it keeps."""
    found = text.lower().strip()
    for keyword in _ANSWER_KEYWORDS:
        if keyword in found:
            found = found.split(keyword)[-1]
    tail = ".:," if source == "Omni3D" else "."
    found = found.strip().rstrip(tail).lstrip("(").rstrip(")")
    return found[0] if len(found) > 1 else found


def paper(text: str, source: str, choices: Sequence[str], gold: str) -> Reading:
    read = paper_text(text, source)
    right = read == gold.lower()
    if source == "Omni3D":  # omni_test.py:66-71: the gold option's text also counts
        right = right or read == choices[ord(gold) - 65]
    shown = read.upper() if read.upper() in letters(choices) else ""
    return Reading(shown, right)


def lmms_eval_letter(text: str) -> str:
    """`_extract_answer_letter`: the reply's first letter, upper-cased, or ""."""
    match = _LMMS.match(text.strip())
    return match.group(1).upper() if match else ""


def lmms_eval(text: str, choices: Sequence[str], gold: str) -> Reading:
    read = lmms_eval_letter(text)
    return Reading(read if read in letters(choices) else "", read == gold)


def vlmevalkit(text: str, choices: Sequence[str], gold: str) -> Reading:
    read = option_without_judge(text, dict(zip(letters(choices), choices, strict=True)))
    return Reading(read if read in letters(choices) else "", read == gold)


def read(protocol: str, text: str, source: str, choices: Sequence[str],
         gold: str) -> Reading:
    """The reading of `protocol` against `gold` (an option letter)."""
    if protocol == "paper":
        return paper(text, source, choices, gold)
    if protocol == "lmms-eval":
        return lmms_eval(text, choices, gold)
    return vlmevalkit(text, choices, gold)
