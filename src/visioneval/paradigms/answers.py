"""Reading a model's reply as one of the trial's options, or as a number: strict, so that an
answer naming both options, or none, is counted as unparsed rather than guessed."""

from __future__ import annotations

import re

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def option(text: str, options: tuple[str, ...]) -> str | None:
    """The one option the reply names as a whole word (case aside), or the reply itself
    when it is exactly an option; None when it names none or several."""
    cleaned = text.strip().strip(".!\"'`*").strip().lower()
    lowered = {o.lower(): o for o in options}
    if cleaned in lowered:
        return lowered[cleaned]
    found = {lowered[m.group(0).lower()] for m in re.finditer(
        r"\b(" + "|".join(re.escape(o) for o in sorted(lowered, key=len, reverse=True)) +
        r")\b", text, flags=re.IGNORECASE)} if options else set()
    return found.pop() if len(found) == 1 else None


def number(text: str) -> float | None:
    """The reply's number when it has exactly one (a percentage sign aside); None else."""
    found = _NUMBER.findall(text.replace(",", ""))
    return float(found[0]) if len(found) == 1 else None
