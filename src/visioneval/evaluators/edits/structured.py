"""Structured (JSON) answers: finding one inside its code fence, reading it, walking its
values for the rules to edit in place, and writing it back as the candidate wrote it
(inline or indented, inside the same fence)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_FENCE_OPENING = re.compile(r"```[A-Za-z]*[ \t]*")


@dataclass
class Structured:
    """A JSON answer and how to write it back as the candidate wrote it."""

    data: Any
    before: str
    after: str
    indent: int | None

    def dump(self) -> str:
        return self.before + json.dumps(self.data, ensure_ascii=False,
                                        indent=self.indent) + self.after


def parse_json(before: str, body: str, after: str) -> Structured | None:
    """The (unfenced) body as one JSON object or array, else None."""
    stripped = body.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    lead = body[:len(body) - len(body.lstrip())]
    trail = body[len(body.rstrip()):]
    return Structured(data, before + lead, trail + after, 2 if "\n" in stripped else None)


def unfence(output: str) -> tuple[str, str, str]:
    """(opening fence, body, closing fence) of a fenced answer; ("", output, "") otherwise.
    Scanned by hand: a fence regex backtracks quadratically over long blank runs."""
    stripped = output.strip()
    newline = stripped.find("\n")
    if (len(stripped) < 7 or not stripped.startswith("```") or not stripped.endswith("```")
            or newline < 0 or not _FENCE_OPENING.fullmatch(stripped[:newline])):
        return "", output, ""
    lead = len(output) - len(output.lstrip())
    start, end = lead + newline + 1, lead + len(stripped) - 3
    if end < start:
        return "", output, ""
    return output[:start], output[start:end], output[end:]


def leaves(data: Any) -> list[tuple[Any, Any, Any]]:
    """(container, key, value) of every value in document order, containers included; the
    root as (None, None, root). Iterative: a deep document does not exhaust the stack."""
    found: list[tuple[Any, Any, Any]] = [(None, None, data)]
    stack = [iter(_children(data))]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            continue
        found.append(child)
        stack.append(iter(_children(child[2])))
    return found


def _children(node: Any) -> list[tuple[Any, Any, Any]]:
    if isinstance(node, dict):
        return [(node, k, v) for k, v in node.items()]
    if isinstance(node, list):
        return [(node, i, v) for i, v in enumerate(node)]
    return []
