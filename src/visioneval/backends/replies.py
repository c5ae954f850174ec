"""Checks shared by the protocols' reply readers (each protocol reads its shape in one place).

At 10^5 requests a rare odd reply is a certainty, and one must cost one sample, not the run.
An answer that is missing or not text is a failed attempt with a one-line reason, never a
scored answer: a broken envelope or a missing answer is retried (TransientError: the server
misbehaved), an answer the server says it withheld (content filter, refusal, tool call) is
final (PermanentError: the same request gets the same verdict). Malformed metadata around a
good answer (usage, token counts, finish reason) is dropped with one warning per kind.
"""

from __future__ import annotations

import logging
import math
import reprlib
from typing import Any

from visioneval.backends.base import BackendError, PermanentError, TransientError

log = logging.getLogger(__name__)

MISSING: Any = object()
"""Stands for an absent key in messages (distinct from JSON null)."""

WITHHELD = {
    "content_filter": "the server's content filter withheld the answer",
    "refusal": "the model refused to answer",
    "tool_calls": "the model called a tool instead of answering",
    "tool_use": "the model called a tool instead of answering",
    "function_call": "the model called a function instead of answering",
}
MAX_TOKENS_COUNT = 2**53  # larger counts are garbage (and would not fit a JSON integer)

_repr = reprlib.Repr()  # keyword arguments need Python 3.12
_repr.maxstring = _repr.maxother = 40
_repr.maxlist = _repr.maxdict = 3
_repr.maxlevel = 2


def describe(value: Any) -> str:
    """A short, one-line account of a value found where something else was expected."""
    if value is MISSING:
        return "missing"
    if value is None:
        return "null"
    kind = {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)
    return f"{kind} ({_repr.repr(value)})".replace("\n", " ")


def malformed(where: str, value: Any) -> TransientError:
    return TransientError(f"malformed reply: {where} is {describe(value)}")


def body_object(data: Any) -> dict[str, Any]:
    """A reply's decoded body, which every protocol here answers as a JSON object."""
    if not isinstance(data, dict):
        raise malformed("the body", data)
    return data


def object_at(parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """`parent[key]`, a part of the reply that must be an object (`where` names it)."""
    value = parent.get(key, MISSING)
    if not isinstance(value, dict):
        raise malformed(where, value)
    return value


def no_answer(where: str, value: Any, finish: str | None, finish_key: str) -> BackendError:
    """The envelope is sound but there is no text answer; final if the server says why."""
    if finish in WITHHELD:
        return PermanentError(f"{WITHHELD[finish]} ({finish_key} {finish}); no answer to score")
    said = f" ({finish_key} {finish})" if finish else ""
    return TransientError(f"reply has no text answer: {where} is {describe(value)}{said}")


class MetadataReader:
    """Reads optional metadata; says once per kind (per backend) what it had to drop."""

    def __init__(self, source: str):
        self._source = source
        self._warned: set[str] = set()

    def drop(self, kind: str, value: Any) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            log.warning("%s: dropped a malformed %s (%s) from a reply and kept its answer; "
                        "later ones are dropped silently", self._source, kind, describe(value))

    def mapping(self, value: Any, kind: str) -> dict[str, Any]:
        if isinstance(value, dict):
            return value
        if value is not None and value is not MISSING:
            self.drop(kind, value)
        return {}

    def text(self, value: Any, kind: str) -> str | None:
        if value is None or isinstance(value, str):
            return value
        if value is not MISSING:
            self.drop(kind, value)
        return None

    def count(self, value: Any, kind: str) -> int | None:
        """A token count: a non-negative integer (an integral float is taken as one)."""
        if type(value) is int and 0 <= value < MAX_TOKENS_COUNT:
            return value
        if type(value) is float and value.is_integer() and 0 <= value < MAX_TOKENS_COUNT:
            return int(value)
        if value is not None and value is not MISSING:
            self.drop(kind, value)
        return None

    def money(self, value: Any, kind: str) -> float | None:
        """An amount of money: a finite, non-negative number (never a boolean)."""
        if type(value) in (int, float) and math.isfinite(value) and value >= 0:
            return float(value)
        if value is not None and value is not MISSING:
            self.drop(kind, value)
        return None
