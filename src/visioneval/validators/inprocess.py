"""Running a built-in validator inside the evaluate run: a function call, not a process.

A built-in validator on a short answer costs 30-160 µs as a call, against ~100 ms of wall
time and ~190 ms of CPU as a `python -m` subprocess (docs/PERFORMANCE.md). A thread would
cost more than the call (~250 µs a hop) and cannot be stopped, so the call runs on the
event loop. But the cost grows faster than the text: OCR similarity is quadratic (1 KB
~50 ms, 5 KB 1.5 s, 50 KB ~2 minutes) and some chart inputs are cubic (50 KB of digits: ~8
minutes), and a JSON Schema's `pattern` is a regular expression the case file writes. Such
payloads (texts and options over INLINE_CHARS, or a schema) keep the subprocess with its
timeout and process-group kill (`runner.py`), which is all a thread could not give: a run
never hangs on one case and never blocks its judge requests for more than a few ms.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from visioneval.validators import BUILTIN
from visioneval.validators.protocol import KNOWN_KEYS, call
from visioneval.validators.result import EvalResult
from visioneval.validators.runner import TIMEOUT_S, ValidatorCommand, run_validator

INLINE_CHARS = 1000
"""Characters of output, expected output and options up to which a call is in-process: the
slowest inputs measured at this size take ~20 ms (chart on digits, OCR on repeated text)."""


def runs_inline(name: str, payload: dict[str, Any]) -> bool:
    """Whether the call's cost is bounded by a few ms (see the module's docstring)."""
    if name == "json" and payload.get("schema") is not None:
        return False
    options = {k: v for k, v in payload.items() if k not in KNOWN_KEYS}
    size = sum(len(str(payload.get(k) or "")) for k in ("output", "expected_output"))
    return size + len(json.dumps(options)) <= INLINE_CHARS


def call_builtin(name: str, payload: dict[str, Any]) -> EvalResult:
    """The validator's result for a JSON payload, as its command would print it."""
    validate = importlib.import_module(f"visioneval.validators.{name}").validate
    try:
        return call(validate, dict(payload))
    except Exception as exc:  # as the command: a result, never a traceback
        return EvalResult.error(f"validator crashed: {type(exc).__name__}: {exc}")


async def run_builtin(name: str, payload: dict[str, Any],
                      timeout_s: float = TIMEOUT_S) -> EvalResult:
    """A built-in validator's result: called in-process when that is cheap, else run as its
    command with the timeout. The payload goes through JSON either way, as on the command's
    stdin, so both give the same result."""
    if name not in BUILTIN:
        return EvalResult.error(f"unknown validator {name!r}; built-in: {', '.join(BUILTIN)}")
    try:
        data = json.loads(json.dumps(payload))
    except (TypeError, ValueError) as exc:
        return EvalResult.error(f"the payload is not JSON: {exc}")
    if runs_inline(name, data):
        return call_builtin(name, data)
    return await run_validator(ValidatorCommand.builtin(name), data, timeout_s)
