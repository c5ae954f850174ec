"""VLMEvalKit's shared answer-reading rules, re-implemented so a benchmark can score an answer
exactly as VLMEvalKit's rule-based step would, before (or instead of) its judge model.

Read from open-compass/VLMEvalKit at commit e8e78f05f3080fe28154f2130321f17951c3be94
(the files cited last changed in 2cf2a36c). Files and lines below are at that commit.

Yes/no questions (POPE, HallusionBench; `vlmeval/dataset/image_yorn.py`):
- every prediction is `str()`-ed (image_yorn.py:47) and read by `YOrN_Extraction`
  (`vlmeval/dataset/utils/yorn.py:254-261`): lower-cased, `process_punctuation`
  (`vlmeval/smp/misc.py:18-33`), split on whitespace; "Yes" when the word "yes" is there
  and "no" is not, "No" the other way round, else "Unknown". Only "Unknown" goes to the
  judge (gpt-4o-mini by default, run.py:346-358; five tries at temperature 0, 0.5, ...,
  yorn.py:264-272); without a working judge "Unknown" stays and is scored wrong, since the
  score is `answer == extracted` (image_yorn.py:91).

Multiple choice (MMVP; `vlmeval/dataset/utils/multiple_choice.py`):
- the choices are the item's columns "A".."Z" that are not empty (build_choices, 346-351);
  `can_infer` (`vlmeval/utils/matching_util.py:124-127`) tries `can_infer_option` (18-61)
  and, when that gives nothing, `can_infer_text` (107-121). When neither infers a letter the
  judge is asked (three tries, then a random letter among the choices and "Z",
  multiple_choice.py:385-405); under `exact_matching` the answer is recorded as "Z" and
  scored wrong (multiple_choice.py:380-383).

Reasoning models: VLMEvalKit reads the whole text, `<think>` block included, unless the run
sets `SPLIT_THINK` (vlmeval/inference.py:247-273), which keeps what follows the last
`</think>` (`split_thinking` here).

NaturalBench's own `extract_answer` (vlmeval/dataset/utils/naturalbench.py) and MMVP's pair
metric (`report_acc_MMVP`, multiple_choice.py:613-623) belong to those benchmarks, not here.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Literal

YesNo = Literal["Yes", "No", "Unknown"]

# process_punctuation's marks (vlmeval/smp/misc.py:21-24). ".", ":", "'", "*" and "#" are not
# among them, so "yes:" or "**yes**" stay one word that is not "yes".
PUNCTUATION = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">",
               "<", "@", "`", ",", "?", "!")
_DIGIT_COMMA_DIGIT = re.compile(r"(\d)(,)(\d)")  # misc.py:25
_LONE_PERIOD = re.compile(r"(?<!\d)\.(?!\d)")  # misc.py:26
# misc.py:32 passes re.UNICODE as `sub`'s third argument, which is `count`: only the first
# 32 periods that are not next to a digit are removed.
_PERIODS_REMOVED = int(re.UNICODE)

# can_infer_option's refusal strings (matching_util.py:24-27), matched case-sensitively as
# substrings; any of them reads as "Z". "I cannot answer" is not among them.
REFUSALS = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)
# VLMEvalKit's marker of a failed API request (matching_util.py:21): option matching is
# skipped, text matching still runs.
API_FAILURE = "Failed to obtain answer via API"
# Characters that become spaces before the letters are looked for (matching_util.py:40).
_OPTION_SEPARATORS = ".()[],:;!*#{}"
# matching_util.py:15: "answer is B", "correct answer is **C**", case-insensitive, A-D only,
# with nothing after the letter required: "the answer is because" reads as B.
_ANSWER_IS = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")
# can_infer_option accepts a single letter only when it is among the last 4 tokens
# (`splits.index(ch) > len(splits) - 5`, matching_util.py:52).
_LAST_TOKENS = 4
REFUSAL_LETTER = "Z"


def process_punctuation(text: str) -> str:
    """VLMEvalKit's `process_punctuation` (vlmeval/smp/misc.py:18-33).

    Each mark is deleted when the text has it next to a space (either side) or when the text
    holds a digit-comma-digit such as "1,000" anywhere; otherwise it becomes a space. Both
    tests look at the text as given, not as already changed. Then up to 32 periods that do
    not touch a digit are deleted."""
    has_digit_comma = _DIGIT_COMMA_DIGIT.search(text) is not None
    out = text
    for mark in PUNCTUATION:
        touches_space = mark + " " in text or " " + mark in text
        out = out.replace(mark, "" if touches_space or has_digit_comma else " ")
    return _LONE_PERIOD.sub("", out, count=_PERIODS_REMOVED)


def yes_no(text: str) -> YesNo:
    """VLMEvalKit's `YOrN_Extraction` (vlmeval/dataset/utils/yorn.py:254-261): whole words
    after lower-casing and `process_punctuation`; "yes" without "no" is Yes, "no" without
    "yes" is No, anything else (both, neither) is Unknown."""
    words = process_punctuation(text.lower()).split()
    if "yes" in words and "no" not in words:
        return "Yes"
    if "no" in words and "yes" not in words:
        return "No"
    return "Unknown"


def option(text: str, choices: Mapping[str, str]) -> str | None:
    """VLMEvalKit's `can_infer` (vlmeval/utils/matching_util.py:124-127): the letter read from
    `text`, "Z" for a refusal, or None when nothing can be inferred (VLMEvalKit would then
    ask its judge). `choices` maps upper-case letters to the options' texts."""
    return _letter(text, choices) or _text(text, choices)


def option_without_judge(text: str, choices: Mapping[str, str]) -> str:
    """What VLMEvalKit records under `--judge exact_matching`: the inferred letter, or "Z"
    when none can be inferred (vlmeval/dataset/utils/multiple_choice.py:380-383)."""
    return option(text, choices) or REFUSAL_LETTER


def split_thinking(text: str) -> tuple[str, str]:
    """(answer, thinking) as VLMEvalKit splits a prediction when `SPLIT_THINK` is set
    (vlmeval/inference.py:255-268). With a `</think>`, the answer is what follows the last
    one, stripped; the thinking is what lies between `<think>` and the one `</think>`, or
    everything before the last `</think>` (tag kept) when the tags are not one clean pair.
    Without `</think>` the text is the answer unchanged (an unclosed `<think>` stays)."""
    if "</think>" not in text:
        return text, ""
    parts = text.split("</think>")
    answer = parts[-1].strip()
    if len(parts) == 2 and "<think>" in parts[0]:
        return answer, parts[0].split("<think>")[1].strip()
    return answer, "</think>".join(parts[:-1]) + "</think>"


def _letter(text: str, choices: Mapping[str, str]) -> str | None:
    """`can_infer_option` (matching_util.py:18-61) with VLMEvalKit's `VERBOSE` unset (set,
    it refuses any answer with a token "A" among more than 3 tokens, line 49-51)."""
    if API_FAILURE in text:
        return None
    if any(refusal in text for refusal in REFUSALS):
        return REFUSAL_LETTER
    spaced = text
    for separator in _OPTION_SEPARATORS:
        spaced = spaced.replace(separator, " ")
    tokens = spaced.split()
    # Letters count as whole tokens, case-sensitively: "(a)" is no letter, "A." is A.
    present = [letter for letter in choices if letter in tokens]
    if len(present) == 1:
        if tokens.index(present[0]) >= len(tokens) - _LAST_TOKENS:
            return present[0]
    elif not present and REFUSAL_LETTER in tokens:
        return REFUSAL_LETTER
    # Several letters, or one too early: only "answer is X" can still name one.
    match = _ANSWER_IS.search(text)
    if match and match.group(1).upper() in choices:
        return match.group(1).upper()
    return None


def _text(text: str, choices: Mapping[str, str]) -> str | None:
    """`can_infer_text` (matching_util.py:107-121): the one option whose text (lower-cased)
    is a substring of the lower-cased answer, tried only when the answer is at most twice as
    long as all the options' texts together. Two or more options found: nothing."""
    answer = text.lower()
    if len(answer) > 2 * sum(len(str(value)) for value in choices.values()):
        return None
    for letter in choices:
        # `assert k in string.ascii_uppercase` (line 113), a substring test, reached only
        # past the length check.
        if letter not in string.ascii_uppercase:
            raise ValueError(f"choice key {letter!r} is not an upper-case letter")
    found = [letter for letter, value in choices.items() if str(value).lower() in answer]
    return found[0] if len(found) == 1 else None
