"""A comparison table carries its benchmark's sections (figures, tests) the way a run's page
does: the compare page draws them after the table, comparison.md and the terminal give
their tables, notes and lists and say where the charts are; values stay text."""

from __future__ import annotations

from visioneval.core.blocks import Charts, ComparisonTable, Items, Note, Section, Table
from visioneval.core.figures import RateBars
from visioneval.report import compare


def _svg() -> RateBars:
    return RateBars("curves <of> runs", ["a <b>label</b>"], [50.0])


def _table(sections: list[Section]) -> ComparisonTable:
    return ComparisonTable("bench", ["Model", "Run", "score"], [["m", "r1", "1.0"],
                                                                  ["m", "r2", "2.0"]],
                           [True], sections=sections)


SECTIONS = [Section("Curves", [Charts([_svg(), _svg()]), Note("How to read | them")]),
            Section("Differences", [Table(["run", "what", "p"], [["r2", "x_y", "0.01"]],
                                          numeric_from=2),
                                    Items(["r3: no test <none>"])])]


def test_the_markdown_gives_the_sections_tables_and_notes_and_counts_the_charts():
    text = compare.to_markdown(_table(SECTIONS))
    assert text.index("| m | r2 | 2.0 |") < text.index("## Curves") < text.index(
        "## Differences")
    assert "(2 charts on the compare page, comparison.html)" in text
    assert "How to read \\| them" in text  # a | cannot add a column
    assert "| run | what | p |\n|---|---|---:|\n| r2 | x\\_y | 0.01 |" in text
    assert "- r3: no test &lt;none&gt;" in text
    assert "<svg" not in text


def test_the_page_draws_the_sections_after_the_table_with_their_charts():
    page = compare.to_html(_table(SECTIONS))
    assert page.index("</table>") < page.index("<h2>Curves</h2>") < page.index(
        "<h2>Differences</h2>")
    assert page.count("<svg") == 2
    assert "a &lt;b&gt;label&lt;/b&gt;" in page and "<b>label" not in page
    assert "<li>r3: no test &lt;none&gt;</li>" in page


def test_a_table_without_sections_reads_as_before():
    text = compare.to_markdown(_table([]))
    assert "##" not in text and "chart" not in text
    assert "<h2>" not in compare.to_html(_table([])).split("<main>")[1].split("</main>")[0]


def test_the_terminal_draws_the_table_and_its_sections_never_markdown(monkeypatch):
    """`compare` in a wide terminal: the table drawn within 100 columns, a column no run has
    a value in left out and named, values as written (no Markdown escapes), the sections'
    tables and notes after it, their charts named."""
    import io

    from visioneval import terminal
    from visioneval.report import compare_console

    monkeypatch.setenv("COLUMNS", "250")
    out = terminal.console(file=io.StringIO())
    table = ComparisonTable("bench", ["Model", "Run", "score", "empty"],
                            [["m", "r1", "1.0", ""], ["m", "r2", "2.0", "-"]], [True, True],
                            sections=SECTIONS)
    compare_console.show(table, out)
    lines = out.file.getvalue().splitlines()
    assert lines[0].split() == ["Model", "Run", "score"] and lines[2].split() == ["m", "r1",
                                                                                  "1.0"]
    text = "\n".join(lines)
    assert "Left out here (no run has a value): empty." in text
    assert text.index("r2") < text.index("Curves") < text.index("Differences")
    assert "How to read | them" in text and "x_y" in text and "no test <none>" in text
    assert "(2 charts in comparison.html, written with --out)" in text
    assert "\\" not in text and "|---" not in text and "##" not in text
    assert max(map(len, lines)) <= terminal.WIDTH
