"""A run directory's summaries beside metrics.json (variants.json, epochs.json), read back
checked: absent is None, and a file too big, not JSON or not of its model is a ValueError of
one line naming it. Reading one never runs code."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from visioneval.validation import first_error

M = TypeVar("M", bound=BaseModel)


def read_summary(path: Path, model: type[M], cap: int) -> M | None:
    """The file at `path` as `model` (None: no such file); over `cap` bytes it is not read."""
    if not path.is_file():
        return None
    if path.stat().st_size > cap:
        raise ValueError(f"{path}: over {cap // 1_000_000} MB, not read")
    try:
        return model.model_validate(orjson.loads(path.read_bytes()))
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    except ValidationError as exc:
        raise ValueError(f"{path}: {first_error(exc, whole='', count_more=False)}") from None
