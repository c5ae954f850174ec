"""The command-line protocol shared by every validator (and expected of users' scripts)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from visioneval.validators.result import EvalResult

Validate = Callable[..., dict[str, Any]]
KNOWN_KEYS = ("output", "expected_output", "input")


def read_payload(argv: list[str], stdin_text: str | None) -> dict[str, Any]:
    """The JSON object from the first argument, else from stdin."""
    raw = argv[0] if argv else (stdin_text or "")
    if not raw.strip():
        raise ValueError("no input: pass a JSON object as the first argument or on stdin")
    try:
        payload = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"input is not JSON ({exc.msg} at line {exc.lineno} column "
                         f"{exc.colno})") from None
    if not isinstance(payload, dict):
        raise ValueError(f"input must be a JSON object, not {type(payload).__name__}")
    return payload


def call(validate: Validate, payload: dict[str, Any]) -> EvalResult:
    """Run a validator on a payload; options are the payload's other keys."""
    options = {k: v for k, v in payload.items() if k not in KNOWN_KEYS}
    for key in ("output", "expected_output", "input"):
        value = payload.get(key, "")
        if value is not None and not isinstance(value, str):
            payload[key] = json.dumps(value)  # structured expectations arrive as JSON text
    try:
        result = validate(str(payload.get("output") or ""),
                          str(payload.get("expected_output") or ""),
                          str(payload.get("input") or ""), **options)
        return EvalResult.model_validate(result)
    except TypeError as exc:
        return EvalResult.error(f"bad option: {exc}")
    except (ValueError, RecursionError, MemoryError) as exc:
        return EvalResult.error(f"{type(exc).__name__}: {exc}")


def main(validate: Validate, argv: list[str] | None = None) -> int:
    """Entry point: print the result JSON and return the exit code; never a traceback."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        payload = read_payload(argv, None if argv else sys.stdin.read())
        result = call(validate, payload)
    except ValueError as exc:
        result = EvalResult.error(str(exc))
    except Exception as exc:  # the protocol promises a result, not a traceback
        result = EvalResult.error(f"validator crashed: {type(exc).__name__}: {exc}")
    print(result.model_dump_json())
    return result.exit_code()
