"""pydantic's ValidationError said in one line, the way every part of visioneval says bad
input: where (a field's path, or the command-line flag that set it) and what is wrong.
pydantic's own text runs over several lines and names its documentation pages."""

from __future__ import annotations

from typing import Literal

from pydantic import ValidationError
from pydantic_core import ErrorDetails


def error_message(exc: ValidationError, *, own_words: bool = False) -> str:
    """What is wrong in the first error, without where. `own_words`: a validator's
    ValueError as it was raised (pydantic's message adds "Value error, " before it)."""
    error = exc.errors()[0]
    if own_words and error["type"] == "value_error":
        return str(error["ctx"]["error"])
    return error["msg"]


def error_place(error: ErrorDetails, *, place: Literal["field", "flag"] = "field") -> str:
    """Where an error is: "field", the field's dotted path as the data writes it
    (`judge.model`, `models.2.backend`); "flag", the command-line flag of its top field
    (`max_tokens` -> `--max-tokens`). Empty for an error of the whole value."""
    loc = error["loc"]
    if place == "flag":
        return "--" + str(loc[0]).replace("_", "-") if loc else ""
    return ".".join(str(part) for part in loc)


def first_error(exc: ValidationError, *, place: Literal["field", "flag"] = "field",
                whole: str | None = "value", own_words: bool = False,
                count_more: bool = True) -> str:
    """The first error as `where: what is wrong`. `place`: where as a field's path or as a
    flag (`error_place`). `whole`: the where said for an error of the whole value (None:
    then the line is what is wrong alone). `own_words`: a validator's own message
    (`error_message`). `count_more`: end with "(N more)" when pydantic found others (False: the
    first error alone, where the line already says which input is wrong)."""
    where = error_place(exc.errors()[0], place=place) or whole
    line = error_message(exc, own_words=own_words)
    if where is not None:
        line = f"{where}: {line}"
    if count_more and exc.error_count() > 1:
        line += f" ({exc.error_count() - 1} more)"
    return line
