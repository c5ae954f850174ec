"""How each protocol reads one answer, as pure functions of (answer text, label).

- `paper_reading` ([P] evaluate.py lines 12-21, the same in LLaVA's llava/eval/eval_pope.py
  lines 11-20): keep the text before the first "." (when there is one), delete every ",",
  split on single spaces; "no" if any word is exactly "No", "not" or "no", otherwise "yes".
  Every answer is read: an empty answer, "NO", "No!" or "No\\nThere is none" are "yes"
  (the words are not "No" or "no"), a refusal is "yes" unless it says "not".
- `lmms_reading` ([L] utils.py `pope_process_results`, lines 17-21): the answer lowercased
  and stripped; right only when it *is* the label ("yes." and "yes, there is" are wrong).
  Precision and recall count only answers that are exactly "yes" or "no" (lines 39-65).
- `vlmevalkit_reading` ([V] yorn.py `YOrN_Extraction`, visioneval.harness.vlmevalkit's
  `yes_no`): "Yes" when the lowercased words
  (punctuation stripped) hold "yes" and not "no", "No" the other way round, else "Unknown";
  right when it equals the label ([V] image_yorn.py line 91); in precision, recall and F1
  "Unknown" counts as "No" ([V] yorn.py `POPE_rating`, line 164).
"""

from __future__ import annotations

from visioneval.benchmarks.pope.spec import NO, YES
from visioneval.harness.vlmevalkit import yes_no


def paper_reading(text: str) -> str:
    """"yes" or "no", as the paper's evaluate.py maps an answer."""
    if "." in text:
        text = text.split(".")[0]
    words = text.replace(",", "").split(" ")
    return NO if "No" in words or "not" in words or "no" in words else YES


def lmms_reading(text: str) -> str:
    """The answer as lmms-eval compares it with the label: lowercased, stripped."""
    return text.lower().strip()


def lmms_said(reading: str) -> str | None:
    """"yes" or "no" when lmms-eval's precision and recall count the answer, else None."""
    return reading if reading in (YES, NO) else None


def vlmevalkit_reading(text: str) -> str:
    """"Yes", "No" or "Unknown", VLMEvalKit's rule-based reading (before any judge)."""
    return yes_no(text)


def vlmevalkit_said(reading: str) -> str:
    """The class VLMEvalKit's precision, recall and F1 count: "Unknown" is "no"."""
    return YES if reading == "Yes" else NO


def said(protocol: str, reading: str) -> str | None:
    """The yes/no a protocol's counts take from its reading (None: counted nowhere)."""
    if protocol == "lmms-eval":
        return lmms_said(reading)
    if protocol == "vlmevalkit":
        return vlmevalkit_said(reading)
    return reading


def correct(protocol: str, reading: str, label: str) -> bool:
    """Whether the protocol scores the reading right against a "yes"/"no" label."""
    if protocol == "vlmevalkit":
        return reading.lower() == label  # "Unknown" is never right
    return reading == label
