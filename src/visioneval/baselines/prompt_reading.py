"""What an offline baseline reads from a prompt: the options it offers (SalBench's feature
classes, IllusionBench's option lists, lettered multiple-choice lines) and SalBench's bbox."""

from __future__ import annotations

import re

KNOWN_FEATURES = ("orientation", "color", "focus", "shape", "size", "location", "pattern")
_LIST = re.compile(r"feature integration theory:\s*([^.]*)\.", re.IGNORECASE)
_BBOX = re.compile(r"x_min=([\d.]+),\s*y_min=([\d.]+),\s*x_max=([\d.]+),\s*y_max=([\d.]+)")


def vocabulary(prompt: str) -> tuple[str, ...]:
    """The feature classes the prompt offers, in a canonical order (P3's three or O3's seven).

    Read from the "feature integration theory: A, B and C." sentence; when absent, every
    known feature word in the prompt counts."""
    match = _LIST.search(prompt)
    text = (match.group(1) if match else prompt).lower()
    found = tuple(f for f in KNOWN_FEATURES if re.search(rf"\b{f}\b", text))
    return found or ("orientation", "color", "size")


def bbox(prompt: str) -> tuple[float, float, float, float] | None:
    """The last normalised bounding box in the prompt (the query's, in few-shot prompts)."""
    boxes = _BBOX.findall(prompt)
    if not boxes:
        return None
    x0, y0, x1, y1 = (float(v) for v in boxes[-1])
    return x0, y0, x1, y1


def mentions_red_box(prompt: str) -> bool:
    return "red box" in prompt.lower()


_BRACKETED = re.compile(r"Options:\s*\[([^\]]*)\]")
_LISTED = re.compile(r"Options:[ \t]*([^\[\n][^\n]*?)\.?[ \t]*$", re.MULTILINE)
_LETTERED = re.compile(r"^\(?([A-Z])[.)]\s+\S", re.MULTILINE)  # "A. red" or "(B) blue" lines
_INLINE = re.compile(r"\(([a-z])\)\s*[^\s(]")  # "... (a) Open (b) Closed" in one line
_FOLLOWING = re.compile(r"following options:\s*(.*?)\.?\s+Provide", re.DOTALL)
_YES_OR_NO = re.compile(r"\banswer\s+yes\s+or\s+no\b", re.IGNORECASE)
# "Option: A:red; B:blue;" (NaturalBench's multiple-choice questions), answered by letter.
_OPTION_LETTERS = re.compile(r"(?:Option:\s*|;\s*)([A-Z]):")
_YES_NO = re.compile(r"\byes or no\b|\?", re.IGNORECASE)  # a question and no options: yes/no


def choices(prompt: str) -> tuple[str, ...]:
    """The answers a prompt offers: the letters of two or more lettered option lines ("A.
    red" / "(B) blue": multiple choice answered by letter) or of an "Option: A:red;
    B:blue;" line, two or more options in brackets within a line ("(a) Open (b) Closed":
    answered as "(a)"), Yes and No when it asks to "answer Yes or No", an "Options: [a, b]"
    list, a "following options: a, b ... Provide" list (IllusionBench's two styles), an
    "Options: a, b" line, Yes and No for a question that lists none (a yes/no question: it
    asks "yes or no" or ends in "?"), else SalBench's feature classes."""
    for lettered in (_LETTERED, _OPTION_LETTERS):
        letters = tuple(dict.fromkeys(lettered.findall(prompt)))
        if len(letters) >= 2:
            return letters
    inline = tuple(dict.fromkeys(_INLINE.findall(prompt)))
    if len(inline) >= 2:
        return tuple(f"({letter})" for letter in inline)
    if _YES_OR_NO.search(prompt):
        return ("Yes", "No")
    for pattern in (_BRACKETED, _FOLLOWING, _LISTED):
        match = pattern.search(prompt)
        if match:
            found = tuple(c.strip() for c in match.group(1).split(",") if c.strip())
            if found:
                return found
    if _LIST.search(prompt) is None and _YES_NO.search(prompt):
        return ("Yes", "No")
    return vocabulary(prompt)


_NUMBER_RANGE = re.compile(r"\bnumber from (-?\d+) to (-?\d+)\b", re.IGNORECASE)


def number_range(prompt: str) -> tuple[int, int] | None:
    """The whole-number range of a question that asks for "a number from A to B" (an
    estimate: "Answer with a number from 0 to 100."); None when it asks for none."""
    match = _NUMBER_RANGE.search(prompt)
    if match is None:
        return None
    low, high = int(match.group(1)), int(match.group(2))
    return (low, high) if low < high else None


_ANSWER_FORMAT = "Answer: <your choice>"


def in_asked_format(prompt: str, choice: str) -> str:
    """The choice written as the prompt asks: "Answer: X" when it asks for that format
    (lmms-eval's IllusionBench prompts), else the bare option. Offline models answer in the
    requested format so a strict parser measures their choice, not their formatting."""
    return f"Answer: {choice}" if _ANSWER_FORMAT in prompt else choice
