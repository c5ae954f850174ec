"""`json`: does the answer hold JSON of the expected structure?

The JSON is found in prose or code fences (`visioneval.validators.jsontext`). It is checked
against a JSON Schema (option `schema`, via the `jsonschema` library) or, without one,
against the shape of `expected_output` at every depth: every key of an expected object must
be present with a value of the same JSON type; an expected array's first element is the
template for every element of the answer's array. The score is the share of checks passed
(finding parseable JSON is the first check); `details.missing_keys` and
`details.type_errors` give JSON paths. Default pass threshold 0.8.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from visioneval.validators.jsontext import NoJSON, find_json
from visioneval.validators.result import EvalResult

THRESHOLD = 0.8


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), "unknown")


def shape_checks(answer: Any, expected: Any) -> tuple[int, list[str], list[dict[str, str]]]:
    """(checks made, missing key paths, type errors) walking both values iteratively, so
    depth is bounded by memory, not by Python's recursion limit."""
    checks, missing, wrong = 0, [], []
    stack = [("$", answer, expected)]
    while stack:
        path, got, want = stack.pop()
        checks += 1
        if json_type(got) != json_type(want):
            wrong.append({"path": path, "expected": json_type(want), "found": json_type(got)})
            continue
        if isinstance(want, dict):
            for key, sub in want.items():
                if key in got:
                    stack.append((f"{path}.{key}", got[key], sub))
                else:
                    checks += 1
                    missing.append(f"{path}.{key}")
        elif isinstance(want, list) and want:
            if not got:
                checks += 1
                missing.append(f"{path}[0]")
            for index, item in enumerate(got):
                stack.append((f"{path}[{index}]", item, want[0]))
    return checks, missing, wrong


def schema_checks(answer: Any, schema: dict) -> tuple[int, list[str], list[dict[str, str]]]:
    """(checks made, missing keys, other violations) from jsonschema's error list."""
    try:
        import jsonschema  # for a schema check only: a validator's process starts light
    except ImportError:  # pragma: no cover - a core dependency
        raise ValueError("JSON Schema checks need the jsonschema package") from None
    validator_cls = jsonschema.validators.validator_for(schema)
    validator_cls.check_schema(schema)
    missing, wrong = [], []
    for error in validator_cls(schema).iter_errors(answer):
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
        if error.validator == "required":
            key = error.message.split("'")[1] if "'" in error.message else error.message
            missing.append(f"{path}.{key}")
        else:
            wrong.append({"path": path, "problem": error.message[:200]})
    checks = max(1, _count_constraints(schema)) + 1
    return checks, missing, wrong


def _count_constraints(schema: Any) -> int:
    """Roughly how many things a schema asks for (properties, required keys, types)."""
    count, stack = 0, [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            count += len(node.get("required", [])) + ("type" in node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def validate(output: str, expected_output: str, input_text: str = "",
             threshold: float = THRESHOLD, schema: Any = None, **_: Any) -> dict[str, Any]:
    if isinstance(schema, str):
        schema = json.loads(schema)
    if schema is None:
        if not expected_output.strip():
            return EvalResult.error("give a JSON Schema (option `schema`) or an expected "
                                    "JSON in expected_output").model_dump()
        try:
            expected = find_json(expected_output)
        except NoJSON as exc:
            return EvalResult.error(f"expected_output is not JSON: {exc}").model_dump()
    try:
        answer = find_json(output)
    except NoJSON as exc:
        return EvalResult.processed(0.0, threshold, parseable=False, error=str(exc),
                                    missing_keys=[], type_errors=[]).model_dump()
    if schema is not None:
        checks, missing, wrong = schema_checks(answer, schema)
    else:
        checks, missing, wrong = shape_checks(answer, expected)
    failed = len(missing) + len(wrong)
    score = max(0.0, (1 + checks - failed) / (1 + checks))  # +1: the JSON parsed
    return EvalResult.processed(score, threshold, parseable=True, checks=checks,
                                missing_keys=missing[:200], type_errors=wrong[:200]
                                ).model_dump()


if __name__ == "__main__":
    from visioneval.validators.protocol import main

    sys.exit(main(validate))
