"""VLMEvalKit's rule-based yes/no reading (open-compass/VLMEvalKit at e8e78f0,
vlmeval/dataset/utils/yorn.py `YOrN_Extraction`, lines 254-261, and vlmeval/smp/misc.py
`process_punctuation`, lines 18-33), until the shared harness module takes its place.

The answer is lowercased and its punctuation handled as VLMEvalKit's `process_punctuation`
does: each of `; / [ ] " { } ( ) = + \\ _ - > < @ ` , ? !` is deleted where it stands next to a
space somewhere in the text (or when the text holds a digit-comma-digit), else replaced by a
space; a period not between digits is deleted (at most 32 of them: the call passes
re.UNICODE where `sub` takes its count). The words are then split on whitespace.
"""

from __future__ import annotations

import re
from typing import Literal

_PUNCTUATION = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">",
                "<", "@", "`", ",", "?", "!")
_COMMA_BETWEEN_DIGITS = re.compile(r"(\d)(,)(\d)")
_LONE_PERIOD = re.compile(r"(?<!\d)\.(?!\d)")
_SUB_COUNT = int(re.UNICODE)  # misc.py line 32 passes re.UNICODE as `count`


def punctuation_handled(text: str) -> str:
    out = text
    digits = _COMMA_BETWEEN_DIGITS.search(text) is not None
    for mark in _PUNCTUATION:
        if mark + " " in text or " " + mark in text or digits:
            out = out.replace(mark, "")
        else:
            out = out.replace(mark, " ")
    return _LONE_PERIOD.sub("", out, count=_SUB_COUNT)


def yes_no(text: str) -> Literal["Yes", "No", "Unknown"]:
    words = punctuation_handled(text.lower()).split()
    if "yes" in words and "no" not in words:
        return "Yes"
    if "no" in words and "yes" not in words:
        return "No"
    return "Unknown"
