"""Rubric files: Markdown with a small YAML front matter naming the dimensions, their
weights, the pass threshold and the details the judge must list. Six ship with the package
(`rubrics/`); users point at their own file in the same format."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

BUILTIN_DIR = Path(__file__).parent / "rubrics"
VARIABLES = ("input", "output", "expected_output", "image_reference", "image_references")


class Dimension(BaseModel, frozen=True):
    key: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    weight: float = Field(gt=0)
    question: str


class Rubric(BaseModel, frozen=True):
    name: str
    title: str = ""
    pass_threshold: float = Field(0.7, ge=0, le=1)
    dimensions: tuple[Dimension, ...]
    details: dict[str, str] = Field(default_factory=dict)
    needs_images: bool = True
    body: str = ""

    @field_validator("dimensions")
    @classmethod
    def _distinct(cls, dims: tuple[Dimension, ...]) -> tuple[Dimension, ...]:
        keys = [d.key for d in dims]
        if not dims or len(set(keys)) != len(keys):
            raise ValueError("dimensions must be a non-empty list with distinct keys")
        return dims

    def weighted(self, scores: dict[str, int]) -> float:
        """The rubric score in [0, 1] from integer 0-10 dimension scores, computed here and
        never taken from the judge."""
        total = sum(d.weight for d in self.dimensions)
        return sum(d.weight * scores[d.key] for d in self.dimensions) / (10 * total)


class RubricError(ValueError):
    """A rubric file that cannot be used; the message names the file and the problem."""


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.md"))


@cache
def load_rubric(name_or_path: str) -> Rubric:
    """A built-in rubric by name, or a user's rubric file by path."""
    path = Path(name_or_path)
    if not path.suffix and (BUILTIN_DIR / f"{name_or_path}.md").exists():
        path = BUILTIN_DIR / f"{name_or_path}.md"
    if not path.is_file():
        raise RubricError(f"no rubric {name_or_path!r}: not a file, and built-in rubrics are "
                          f"{', '.join(builtin_names())}")
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        raise RubricError(f"{path}: must start with a '---' front matter block")
    try:
        _, front, body = text.split("---", 2)
        meta = yaml.safe_load(front) or {}
        return Rubric.model_validate({**meta, "body": body.strip()})
    except ValueError as exc:  # pydantic ValidationError is a ValueError
        raise RubricError(f"{path}: {_first_line(exc)}") from None
    except yaml.YAMLError as exc:
        raise RubricError(f"{path}: front matter is not YAML ({_first_line(exc)})") from None


def _first_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(map(str, err['loc']))}: {err['msg']}"
    return str(exc).splitlines()[0]
