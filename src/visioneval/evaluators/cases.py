"""Eval case files: YAML (a list, or a mapping with `cases:`) or JSONL (one case per line).

A case has an id, the input, images (paths relative to the file, or data URLs), the output to
grade, an expected output, and its evaluators: `judge: <rubric name or file>`,
`validator: count|ocr|json|chart`, or `script: <command>` (a user's validator), each with an
optional `threshold`, `options` and `timeout`. A case that cannot be used is reported in one
line naming the file and the case, and skipped; the others run. An image outside the case
file's folder (an absolute path, `../`, a symlink leading out) is such a case unless the
user allows it: a case file must not be able to send any file of the machine to a judge.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from visioneval.evaluators.rubric import builtin_name
from visioneval.io.images import Image, ImageError, outside, read_file
from visioneval.validation import first_error


class EvaluatorSpec(BaseModel, frozen=True):
    judge: str | None = None
    validator: str | None = None
    script: str | None = None
    threshold: float | None = Field(default=None, ge=0, le=1)
    options: dict[str, Any] = Field(default_factory=dict)
    timeout: float | None = Field(default=None, gt=0)

    @field_validator("judge")
    @classmethod
    def _builtin_name(cls, judge: str | None) -> str | None:
        """AgentV's judge file names are the built-in rubrics' names in the metrics."""
        return (builtin_name(judge) or judge) if judge else judge

    @model_validator(mode="after")
    def _exactly_one(self) -> EvaluatorSpec:
        if sum(x is not None for x in (self.judge, self.validator, self.script)) != 1:
            raise ValueError("an evaluator names exactly one of judge, validator, script")
        return self

    @property
    def kind(self) -> str:
        return "judge" if self.judge else "validator" if self.validator else "script"

    @property
    def label(self) -> str:
        """The evaluator's identity in metrics; a custom threshold makes another one."""
        name = f"{self.kind}:{self.judge or self.validator or self.script}"
        return name if self.threshold is None else f"{name}@{self.threshold:g}"


class CaseSpec(BaseModel, frozen=True):
    id: str
    input: str = ""
    images: tuple[str, ...] = ()
    output: str
    expected_output: str = ""
    evaluators: tuple[EvaluatorSpec, ...] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _stringify(cls, data: Any) -> Any:
        """Structured outputs (a JSON answer written as YAML) are compared as JSON text."""
        if isinstance(data, dict):
            data = dict(data)
            for key in ("input", "output", "expected_output"):
                if isinstance(data.get(key), dict | list):
                    data[key] = json.dumps(data[key])
            if isinstance(data.get("id"), int):
                data["id"] = str(data["id"])
        return data


class CaseError(ValueError):
    """A case file that cannot be read at all."""


def read_entries(path: Path) -> list[Any]:
    """The raw case entries of a YAML or JSONL file."""
    if not path.is_file():
        raise CaseError(f"{path}: no such file")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        entries = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    entries.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    entries.append(_Broken(f"line {number}: not JSON ({exc.msg})"))
        return entries
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CaseError(f"{path}: not YAML ({str(exc).splitlines()[0]})") from None
    if isinstance(data, dict):
        data = data.get("cases")
    if not isinstance(data, list):
        raise CaseError(f"{path}: expected a list of cases (or a `cases:` list)")
    return data


class _Broken:
    """An entry that failed before validation (a JSONL line that is not JSON)."""

    def __init__(self, reason: str):
        self.reason = reason


def load_image(ref: str, base: Path, allow_outside: bool = False) -> Image:
    """An image from a data URL or a path relative to the case file (inside its folder,
    symlinks resolved, unless `allow_outside`; a regular file within the size limit, as
    `visioneval vqa` reads them: `images.read_file`)."""
    if ref.startswith("data:"):
        try:
            data = base64.b64decode(ref.split(",", 1)[1], validate=True)
        except (IndexError, ValueError):
            raise ImageError("data URL is not base64") from None
        return Image.from_bytes(data)
    path = base / ref
    if not allow_outside and outside(path, base) is not None:
        raise ImageError(f"{ref} is outside the case file's folder {base} (pass "
                         "--allow-outside-images to read it)")
    # Not a regular file (a FIFO, a device) or over the size limit: refused before reading.
    return Image.from_bytes(read_file(path, ref))


@dataclass(frozen=True, slots=True)
class UnusableCase:
    """A case the run skips with its line: its id (or #position) and what is wrong."""

    name: str
    reason: str


def iter_cases(path: Path, allow_outside_images: bool = False
               ) -> Iterator[tuple[CaseSpec, tuple[Image, ...]] | UnusableCase]:
    """(case, images) for each usable case; an `UnusableCase` for each unusable one."""
    seen: set[str] = set()
    for index, entry in enumerate(read_entries(path)):
        name = f"#{index + 1}"
        if isinstance(entry, _Broken):
            yield UnusableCase(name, entry.reason)
            continue
        if isinstance(entry, dict) and entry.get("id") is not None:
            name = str(entry["id"])
        try:
            case = CaseSpec.model_validate(entry)
        except ValidationError as exc:
            yield UnusableCase(name, first_error(exc, whole="case", count_more=False))
            continue
        if case.id in seen:
            yield UnusableCase(name, "duplicate id")
            continue
        labels = [e.label for e in case.evaluators]
        if len(set(labels)) != len(labels):
            yield UnusableCase(name, "the same evaluator twice (give one a different threshold)")
            continue
        seen.add(case.id)
        try:
            images = tuple(load_image(ref, path.parent, allow_outside_images)
                           for ref in case.images)
        except ImageError as exc:
            yield UnusableCase(name, f"image: {exc}")
            continue
        yield case, images
