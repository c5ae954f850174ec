"""CSV cells that a spreadsheet reads as text, never as a formula.

A model name, a group or a caption comes from a dataset or a server; a cell starting with
`=`, `+`, `-` or `@` (or a tab or carriage return) is run as a formula when the CSV is
opened in Excel, LibreOffice or Google Sheets (`=HYPERLINK(...)` can send data away). Such
text gets a leading single quote, OWASP's rule for CSV injection. Numbers stay numbers: a
Python int or float, or text that is a plain decimal number ("-0.5", "+3.2", "1e-05", as
`fmt.pct` writes a signed difference), is written as it is, so readers still parse it.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def cell(value: Any) -> Any:
    """`value` as written to a CSV: text that a spreadsheet would run as a formula gets a
    leading `'`; numbers, number-shaped text and everything else are left as they are."""
    if isinstance(value, str) and value.startswith(TRIGGERS) \
            and _NUMBER.fullmatch(value) is None:
        return "'" + value
    return value


class Writer:
    """`csv.writer` whose every cell (header included) goes through `cell`."""

    def __init__(self, out: SupportsWrite[str], **fmtparams: Any):
        self._writer = csv.writer(out, **fmtparams)

    def writerow(self, row: Iterable[Any]) -> None:
        self._writer.writerow([cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(out: SupportsWrite[str], **fmtparams: Any) -> Writer:
    """A drop-in for `csv.writer(out, ...)` that escapes formula-like text."""
    return Writer(out, **fmtparams)
