"""Finding the JSON in a model's reply: a fenced block, the whole text, or the first object
or array embedded in prose. Shared by the JSON validator and the judges' reply parser."""

from __future__ import annotations

import json
import re
from typing import Any

FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)
MAX_CANDIDATES = 64  # openings tried in prose; bounds the work on huge inputs


class NoJSON(ValueError):
    """The text holds no parseable JSON value; the message says what went wrong."""


def find_json(text: str) -> Any:
    """The first JSON value in `text`, in order of trust: fenced block, whole text, embedded."""
    decoder = json.JSONDecoder()
    problems: list[str] = []
    for block in FENCE.findall(text):
        try:
            return json.loads(block)
        except json.JSONDecodeError as exc:
            problems.append(f"fenced block: {exc.msg} at line {exc.lineno} column {exc.colno}")
        except RecursionError:
            raise NoJSON("the JSON is nested too deeply to parse") from None
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    except RecursionError:
        raise NoJSON("the JSON is nested too deeply to parse") from None
    tried = 0
    for match in re.finditer(r"[\[{]", text):
        if tried >= MAX_CANDIDATES:
            break
        tried += 1
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        except RecursionError:
            raise NoJSON("the JSON is nested too deeply to parse") from None
        if isinstance(value, dict | list):
            return value
    raise NoJSON("; ".join(problems) or "no JSON object or array found")
