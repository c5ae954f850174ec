"""`visioneval validate`: one code validator run on a JSON payload, under the validators'
own command-line protocol (validators/protocol.py: result JSON on stdout; exit 0 passed, 1
failed, 2 error)."""

from __future__ import annotations

import importlib

from visioneval.validators import BUILTIN
from visioneval.validators.protocol import main
from visioneval.validators.result import EvalResult


def validate(name: str, payload: str | None) -> int:
    """The validator `name` on `payload` (None: stdin); an unknown name is an error result
    naming the built-in ones, exit 2."""
    if name not in BUILTIN:
        result = EvalResult.error(f"unknown validator {name!r}; built-in: {', '.join(BUILTIN)}")
        print(result.model_dump_json())
        return 2
    module = importlib.import_module(f"visioneval.validators.{name}")
    return main(module.validate, [payload] if payload is not None else [])
