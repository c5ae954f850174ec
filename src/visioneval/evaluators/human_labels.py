"""Human scores to check rubric judges against: a CSV file with a header, or JSONL (one object
a line), with `case`, `dimension`, `score` (0-10, the rubrics' scale, fractions allowed) and
optionally `evaluator` (`judge:image-description`) and `rater`; other columns are ignored.

Several rows for one (case, evaluator, dimension) are several raters and are averaged. A
file with one bad row is refused with that row's line: a reference read in part would bias
the agreement without saying so. Rows for cases, evaluators or dimensions a run does not
have are well formed, only not this run's (a file for every case, a run of some of them):
the run leaves them out and says how many and which (`unused`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from visioneval.evaluators.rubric import builtin_name

REQUIRED = ("case", "dimension", "score")
SCALE = (0.0, 10.0)
TOLERANCE = 1e-6
"""How far past the scale's ends a score may be and still be read (as the end itself): a
spreadsheet's 10.0000001 is a 10 written through floating point, not a score of 11."""
Key = tuple[str, str | None, str]


@dataclass(frozen=True)
class HumanScore:
    mean: float
    raters: int


class HumanLabelsError(ValueError):
    """A human-labels file that cannot be used, in one line: file, line, field."""


@dataclass(frozen=True)
class HumanLabels:
    source: str
    sha256: str
    scores: Mapping[Key, HumanScore]  # (case id, evaluator label or None, dimension)

    def lookup(self, case: str, evaluator: str, dimension: str) -> HumanScore | None:
        """The human score for this evaluator's dimension of a case: the rows naming the
        evaluator, else those naming it without its `@threshold` (a threshold changes the
        verdict, not the scores), else the rows naming no evaluator."""
        key = self.key_for(case, evaluator, dimension)
        return self.scores[key] if key is not None else None

    def key_for(self, case: str, evaluator: str, dimension: str) -> Key | None:
        """The key of the scores `lookup` gives (None: none)."""
        label = evaluator_label(evaluator)
        for who in (label, label.split("@", 1)[0], None):
            if (case, who, dimension) in self.scores:
                return case, who, dimension
        return None

    def unused(self, asked: Iterable[tuple[str, str, str]]) -> list[Key]:
        """The scores no (case, evaluator, dimension) of `asked` looks up, in file order:
        their case, evaluator or dimension is not in the run."""
        used = {self.key_for(*one) for one in asked}
        return [key for key in self.scores if key not in used]


def shown(key: Key) -> str:
    """A score's key as a line names it: case, evaluator (when the row names one), dimension."""
    case, evaluator, dimension = key
    return " ".join(part for part in (case, evaluator, dimension) if part)


def evaluator_label(text: str) -> str:
    """An evaluator as the metrics name it: AgentV's judge file names become the built-in
    rubrics' names, as in case files (`judge:reasoning-judge` is `judge:visual-reasoning`)."""
    kind, sep, rest = text.partition(":")
    if kind != "judge" or not sep:
        return text
    name, at, threshold = rest.partition("@")
    return f"judge:{builtin_name(name) or name}{at}{threshold}"


def _rows_csv(text: str, where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [name.strip() for name in reader.fieldnames or []]
    if not header:
        raise HumanLabelsError(f"{where}: empty file (expected a header with "
                               f"{', '.join(REQUIRED)})")
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise HumanLabelsError(f"{where}, line {reader.line_num}: no `{missing[0]}` column "
                               f"(the header has {', '.join(header)})")
    reader.fieldnames = header
    for row in reader:
        yield reader.line_num, row


def _rows_jsonl(text: str, where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise HumanLabelsError(f"{where}, line {number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise HumanLabelsError(f"{where}, line {number}: not a JSON object")
        yield number, row


def _is_jsonl(path: Path, text: str) -> bool:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return True
    if path.suffix.lower() == ".csv":
        return False
    return text.lstrip().startswith("{")


def _optional(row: dict[str, Any], field: str, where: str) -> str | None:
    value = row.get(field)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # case ids written as numbers, as case files allow
    if value is not None and not isinstance(value, str):
        raise HumanLabelsError(f"{where}, field `{field}`: {json.dumps(value)} is not text")
    return (value or "").strip() or None


def _required(row: dict[str, Any], field: str, where: str) -> str:
    value = _optional(row, field, where)
    if value is None:
        raise HumanLabelsError(f"{where}, field `{field}`: "
                               f"{'missing' if row.get(field) is None else 'empty'}")
    return value


def _score(row: dict[str, Any], where: str) -> float:
    raw = row.get("score")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise HumanLabelsError(f"{where}, field `score`: "
                               f"{'missing' if raw is None else 'empty'}")
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise HumanLabelsError(f"{where}, field `score`: {json.dumps(raw)} is not a number")
    try:
        score = float(raw)
    except ValueError:
        raise HumanLabelsError(f"{where}, field `score`: {raw!r} is not a number") from None
    if not math.isfinite(score):
        raise HumanLabelsError(f"{where}, field `score`: {raw!r} is not a number")
    if not SCALE[0] - TOLERANCE <= score <= SCALE[1] + TOLERANCE:
        written = raw.strip() if isinstance(raw, str) else json.dumps(raw)
        raise HumanLabelsError(f"{where}, field `score`: {written} is outside "
                               f"{SCALE[0]:g}-{SCALE[1]:g}")
    return min(max(score, SCALE[0]), SCALE[1])


def read_human_labels(path: Path) -> HumanLabels:
    """The human scores of a CSV or JSONL file, averaged over raters per (case, evaluator,
    dimension); HumanLabelsError at the first row that cannot be used."""
    if not path.is_file():
        raise HumanLabelsError(f"{path}: no such file")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise HumanLabelsError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise HumanLabelsError(f"{path}: empty file")
    rows = _rows_jsonl(text, str(path)) if _is_jsonl(path, text) else _rows_csv(text, str(path))
    sums: dict[Key, list[float]] = {}
    seen: dict[tuple[Key, str], int] = {}
    for number, row in rows:
        where = f"{path}, line {number}"
        case = _required(row, "case", where)
        dimension = _required(row, "dimension", where)
        evaluator = _optional(row, "evaluator", where)
        rater = _optional(row, "rater", where)
        key: Key = (case, evaluator_label(evaluator) if evaluator else None, dimension)
        score = _score(row, where)
        if rater is not None:
            if (key, rater) in seen:
                raise HumanLabelsError(
                    f"{where}, field `rater`: {rater} already scored case {case}, "
                    f"dimension {dimension} on line {seen[key, rater]}")
            seen[key, rater] = number
        sums.setdefault(key, []).append(score)
    if not sums:
        raise HumanLabelsError(f"{path}: no label rows")
    scores = {key: HumanScore(math.fsum(values) / len(values), len(values))
              for key, values in sums.items()}
    return HumanLabels(str(path), hashlib.sha256(data).hexdigest(), scores)
