"""Tool usage from the agent's `-json-response.json`: counts, efficiency, accuracy.

The file is what the CANVAS agent server returns: `{"response", "json_response":
{"messages": [{"role", "content", "id"}...], ...}, "step_count"}`, where `content` is
langchain's `message_to_dict` (`{"type": "ai"|"tool", "data": {...}}`).

CANVAS's counting (kixlab/canvas `evaluation/metrics/tool_usage_metric.py@575ca75c`):

- data = outer["json_response"] if present, else the outer object; messages = data
  ["messages"];
- a message with role "tool" (or a top-level type "tool") is one call; its name is the
  first of `name`, `tool`, `content.name`, `content.data.name`;
- an assistant message adds one call per entry of `content.data.tool_calls` (name:
  the entry's `name`);
- unique tools = the distinct names seen; step count = data.step_count or
  outer.step_count (0 or missing: none), kept as given (4.5 stays 4.5).

Where CANVAS's code would crash on a value (a tool name that is an object, a list or a number:
unhashable, or unsortable beside the strings; a step count that is not a number), the file
is a `ToolFileError` naming it, so only this sample's tool metrics are an error. A negative
or non-finite step count is one too (CANVAS's code would compute 1 / (S + C + U + 1) from it).

So a call the assistant made and whose result came back as a tool message is counted
twice. `tool_call_count` keeps that count for parity; `tool_call_count_dedup` counts a
tool message whose `tool_call_id` answers an earlier assistant tool call only once, and
its order is the sequence `tool_accuracy` compares.

Efficiency (`tool_efficiency_metric.py@575ca75c`): 1 / (S + C + U + 1) rounded to 4
decimals, with the double-counted C; absent without a step count.

Accuracy (a placeholder returning None in CANVAS's code): given the expected sequence of tool
names (`{gid}-expected-tools.json`), 1 - Levenshtein(expected, actual) / max(len), on the
de-duplicated sequence of names; 1.0 when both are empty.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from visioneval.canvas.metrics import Absent


class ToolFileError(ValueError):
    """A tool-response or expected-tools file that cannot be read; names the file."""


@dataclass
class ToolUsage:
    step_count: int | float | None  # as the file gives it
    call_count: int  # the reference's count (double counts answered calls)
    sequence: list[str] = field(default_factory=list)  # de-duplicated calls, in order
    unique: list[str] = field(default_factory=list)  # sorted distinct names


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _name(value: Any, where: str, index: int) -> str | None:
    """A tool name as CANVAS's code reads it (any falsy value: no name); text only."""
    if not value:
        return None
    if not isinstance(value, str):
        raise ToolFileError(f"{where}: message {index}: the tool name {value!r} is not text")
    return value


def _step_count(value: Any, where: str) -> int | float | None:
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or not math.isfinite(value) or value < 0):
        raise ToolFileError(f"{where}: step_count is {value!r}, not a count of steps")
    return value


def parse_tool_usage(data: Any, where: str = "<json>") -> ToolUsage:
    if not isinstance(data, dict):
        raise ToolFileError(f"{where}: expected a JSON object, got {type(data).__name__}")
    inner = data.get("json_response", data)
    inner = inner if isinstance(inner, dict) else {}
    messages = inner.get("messages", [])
    if not isinstance(messages, list):
        raise ToolFileError(f"{where}: 'messages' is not a list")
    calls = 0
    names: set[str] = set()
    sequence: list[str] = []
    answered: set[str] = set()  # ids of assistant tool calls seen so far
    for index, msg in enumerate(messages):
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        cdata = _dict(_dict(content).get("data"))
        if msg.get("role") == "tool" or msg.get("type") == "tool":
            name = _name(msg.get("name") or msg.get("tool") or _dict(content).get("name")
                         or cdata.get("name"), where, index)
            if name:
                names.add(name)
            calls += 1
            call_id = cdata.get("tool_call_id") or msg.get("tool_call_id")
            if call_id is None or call_id not in answered:
                sequence.append(str(name) if name else "?")
            else:
                answered.discard(call_id)
        if msg.get("role") == "assistant":
            tool_calls = cdata.get("tool_calls") or []
            for call in tool_calls if isinstance(tool_calls, list) else []:
                call = _dict(call)
                name = _name(call.get("name"), where, index)
                if name:
                    names.add(name)
                calls += 1
                sequence.append(name or "?")
                if call.get("id") is not None:
                    answered.add(call["id"])
    step = _step_count(inner.get("step_count") or data.get("step_count") or None, where)
    return ToolUsage(step_count=step, call_count=calls, sequence=sequence,
                     unique=sorted(names))


def _load(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ToolFileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ToolFileError(f"{path}: not JSON ({exc})") from None


def load_tool_usage(path: Path) -> ToolUsage:
    return parse_tool_usage(_load(path), str(path))


def load_expected_tools(path: Path) -> list[str]:
    """A JSON list of tool names (or of objects with `name`), or {"tools": [...]}."""
    data = _load(path)
    if isinstance(data, dict):
        data = data.get("tools", data.get("expected_tools"))
    if not isinstance(data, list):
        raise ToolFileError(f"{path}: expected a list of tool names or {{\"tools\": [...]}}")
    names = []
    for item in data:
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str):
            raise ToolFileError(f"{path}: {item!r} is not a tool name")
        names.append(name)
    return names


def levenshtein(a: list[str], b: list[str]) -> int:
    """Edit distance (insert, delete, substitute, each 1) between two name sequences."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def tool_accuracy(expected: list[str], actual: list[str]) -> float:
    longest = max(len(expected), len(actual))
    if longest == 0:
        return 1.0
    return round(1.0 - levenshtein(expected, actual) / longest, 4)


def tool_metrics(usage: ToolUsage, expected: list[str] | None
                 ) -> dict[str, Any]:
    s, c, u = usage.step_count, usage.call_count, len(usage.unique)
    out: dict[str, Any] = {
        "step_count": s if s is not None else Absent("the response has no step_count"),
        "tool_call_count": c, "tool_call_count_dedup": len(usage.sequence),
        "unique_tool_count": u, "unique_tool_list": usage.unique,
        "tool_efficiency": (round(1.0 / (s + c + u + 1), 4) if s is not None
                            else Absent("no step_count, so no efficiency")),
    }
    out["tool_accuracy"] = (tool_accuracy(expected, usage.sequence) if expected is not None
                            else Absent("no expected tool sequence "
                                        "({gid}-expected-tools.json)"))
    return out
