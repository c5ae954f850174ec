"""`visioneval compare` output: Markdown cells and flags are escaped, CSV stays raw."""

from __future__ import annotations

import csv
import io

from visioneval.core.blocks import ComparisonTable as Comparison
from visioneval.report.compare import to_csv, to_markdown

HOSTILE = "<script>alert(1)</script> | **bold** _x_ `code` [link](http://e.x) # h \\ &amp;"


def _table() -> Comparison:
    return Comparison("salbench", ["Model", "Shot", "P3 F1"],
                      [[HOSTILE, "0", "50.0"], ["plain\nnext line", "3", "40.0"]], [True],
                      flags=[f"prompt differs: {HOSTILE}: paper"],
                      intervals=[[None, None, (45.0, 55.0)], [None, None, (35.0, 44.0)]])


def test_markdown_escapes_html_and_markdown_in_every_value():
    md = to_markdown(_table())
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert "&amp;amp;" in md  # an entity in a value is shown as typed, not decoded
    for raw in ("**bold**", "_x_", "`code`", "[link]"):
        assert raw not in md
    assert "\\\\ &amp;amp;" in md  # a backslash stays a backslash
    # The table keeps its shape: a "|" or a newline in a value never adds a column or row.
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert len(rows) == 3
    assert all(line.count("|") - line.count("\\|") == 4 for line in rows)
    flag = md.splitlines()[0]
    assert flag.startswith("> prompt differs: &lt;script&gt;") and "\\|" in flag
    assert "**50.0**" in md  # ahead beyond the intervals: bold (our own markup)


def test_csv_keeps_values_raw():
    rows = list(csv.reader(io.StringIO(to_csv(_table()))))
    assert rows[1][0] == HOSTILE and rows[2][0] == "plain\nnext line"
