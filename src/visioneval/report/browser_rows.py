"""The sample browser's rows of a report page, read one record at a time.

The page streams the journal once for them (`page.browser_data`). At the end of a new run
the same rows can be read while its answers arrive: the thread that reads the run's
metrics from its journal (`visioneval.runs.live_summary`) tells each record it parses, in
journal order, to `LiveRows`, which hands the rows to the page only when that thread read
the whole journal and its metrics were used (so the records were every one the page's own
pass would read, in the same order). Memory: at most the page's `ROW_LIMIT` rows, whatever
the run's size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from visioneval.core import registry
from visioneval.core.benchmark import BenchmarkDefinition
from visioneval.core.records import Record
from visioneval.core.rundir import image_hashes, prompt_text, shown_definition
from visioneval.core.runfiles import RunInfo
from visioneval.excerpts import capped
from visioneval.report.selection import Selection, priority

ROW_LIMIT = 3000  # samples embedded in a page (failures first); `visioneval view` has them all
REASONING_ENDS = 300  # characters of a reasoning's start and of its end the browser shows


class BrowserRows:
    """The rows the browser embeds (`Selection`: at most `row_limit`, failures first) and
    the groups, labels and views of every record, as records are added in journal order."""

    def __init__(self, definition: BenchmarkDefinition, row_limit: int = ROW_LIMIT):
        self.definition = definition
        self.row_limit = row_limit
        self.chosen = Selection(row_limit)
        self.groups: set[str] = set()
        self.labels: set[str] = set()
        self.views: dict[str, None] = {}
        self._order = 0

    def add(self, record: Record) -> None:
        order = self._order
        self._order += 1
        row = self.definition.browser_row(record)
        error = record.response.error
        row["e"] = capped(error) if error is not None else None
        self.groups.add(record.group)
        self.labels.update(row["labels"])
        self.views.update(dict.fromkeys(row["v"]))
        key = self.chosen.wants(priority(row), record.id)
        if key is not None:
            self.chosen.add(key, order, complete_row(record, row))


class LiveRows:
    """A run's browser rows read by the live summary's thread (a `RecordReader`), with the
    definition its end-of-run page is drawn with (`rundir.shown_definition`, found at the
    first record); `rows()` once that thread has read the whole journal, else None."""

    def __init__(self, info: RunInfo, directory: Path):
        self.info = info
        self.directory = directory
        self._rows: BrowserRows | None = None
        self._whole = False

    def add(self, record: Record) -> None:
        if self._rows is None:
            definition, untrusted = shown_definition(
                self.info, registry.imported_here(self.info), self.directory)
            if untrusted is not None:
                raise ValueError("the run's page is drawn without its definition")
            self._rows = BrowserRows(definition)
        self._rows.add(record)

    def whole(self) -> None:
        self._whole = True

    def rows(self) -> BrowserRows | None:
        return self._rows if self._whole else None


def complete_row(record: Record, row: dict[str, Any]) -> dict[str, Any]:
    """A browser row with what only a shown sample needs: id, group, the query image's
    sha256 (`img`), the prompt text (`p`), the capped response (`r`) and, for a reasoning
    model's answer, an excerpt of the reasoning set aside before parsing (`th`)."""
    images = image_hashes(record)
    row.setdefault("r", capped(record.response.text or ""))
    error = record.response.error
    row["e"] = capped(error) if error is not None else None
    if record.response.reasoning is not None:
        row["th"] = excerpt(record.response.reasoning)
    return {"id": record.id, "g": record.group, "img": images[-1] if images else None,
            "p": prompt_text(record), **row}


def excerpt(text: str, ends: int = REASONING_ENDS) -> str:
    """A long reasoning's first and last `ends` characters (its conclusion is at the end),
    saying how much lies between; the whole text is in samples.jsonl."""
    if len(text) <= 2 * ends + 100:
        return text
    left = len(text) - 2 * ends
    return (f"{text[:ends]}\n... ({left} characters left out; the whole reasoning is in "
            f"samples.jsonl) ...\n{text[-ends:]}")
