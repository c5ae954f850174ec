"""Rubric files: Markdown with a small YAML front matter naming the dimensions, their
weights, the pass threshold and the details the judge must list. Six ship with the package
(`rubrics/`); users point at their own file in the same format, relative to the case file.
AgentV's judge file names (`image-description-judge`, `reasoning-judge` ...) name the
built-in rubrics too."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

from visioneval.validation import first_error

BUILTIN_DIR = Path(__file__).parent / "rubrics"
# AgentV's judge file names (`evaluators/llm-judges/*.md` of its vision proposal, PR #106).
ALIASES = {"image-description-judge": "image-description", "activity-judge": "activity",
           "comparison-judge": "comparison", "reasoning-judge": "visual-reasoning",
           "structured-output-judge": "structured-output",
           "quality-assessment-judge": "quality-assessment"}
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

    def weighted(self, scores: Mapping[str, float]) -> float:
        """The rubric score in [0, 1] from integer 0-10 dimension scores, computed here and
        never taken from the judge."""
        total = sum(d.weight for d in self.dimensions)
        return sum(d.weight * scores[d.key] for d in self.dimensions) / (10 * total)


class RubricError(ValueError):
    """A rubric file that cannot be used; the message names the file and the problem."""


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.md"))


def builtin_name(ref: str) -> str | None:
    """The built-in rubric a bare name (no folder, no suffix) means: its own name or the
    AgentV judge file name; None for anything else."""
    if "/" in ref or "." in ref:
        return None
    name = ALIASES.get(ref, ref)
    return name if (BUILTIN_DIR / f"{name}.md").is_file() else None


def known_names() -> str:
    aliases = ", ".join(f"{a} ({n})" for a, n in ALIASES.items())
    return f"{', '.join(builtin_names())}; also accepted: {aliases}"


def load_rubric(ref: str, base: Path | None = None) -> Rubric:
    """A built-in rubric by name (or its AgentV judge file name), or a user's rubric file by path;
    a relative path is read from `base` (the case file's folder), never the current
    directory."""
    name = builtin_name(ref)
    if name is not None:
        return _read(BUILTIN_DIR / f"{name}.md")
    path = Path(ref).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    if not path.is_file() and Path(ref).name == ref and ref.removesuffix(".md") in ALIASES:
        return _read(BUILTIN_DIR / f"{ALIASES[ref.removesuffix('.md')]}.md")  # AgentV's file name
    if not path.is_file():
        where = f" in {base}" if base and not Path(ref).is_absolute() else ""
        raise RubricError(f"no rubric {ref!r}: not a built-in name and no such file{where}; "
                          f"built-in rubrics: {known_names()}")
    return _read(path)


def _read(path: Path) -> Rubric:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RubricError(f"{path}: cannot read it ({exc})") from None
    if not text.startswith("---"):
        hint = ""
        if path.stem in ALIASES:
            hint = f"; {path.stem} is built in: use `judge: {ALIASES[path.stem]}`"
        raise RubricError(f"{path}: no YAML front matter (a rubric file starts with a '---' "
                          f"block naming its dimensions, see docs/evaluators.md){hint}")
    try:
        _, front, body = text.split("---", 2)
        meta = yaml.safe_load(front)
        if not isinstance(meta, dict):
            raise RubricError(f"{path}: the front matter is not a YAML mapping")
        return Rubric.model_validate({**meta, "body": body.strip()})
    except RubricError:
        raise
    except ValueError as exc:  # pydantic ValidationError is a ValueError
        raise RubricError(f"{path}: {_first_line(exc)}") from None
    except yaml.YAMLError as exc:
        raise RubricError(f"{path}: front matter is not YAML ({_first_line(exc)})") from None


def _first_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return first_error(exc, whole="", count_more=False)
    return str(exc).splitlines()[0]
