"""`visioneval reference BENCHMARK [--model NAME]`: the published tables as rich tables, one
model's rows with --model, and one error line listing the known names otherwise."""

from __future__ import annotations

import pytest
from cli_helpers import flat, invoke

from visioneval.core import registry
from visioneval.report.reference_console import printed_url


@pytest.fixture(autouse=True)
def _wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # rows on one line each


def _printed_rows(output: str, model: str) -> list[list[str]]:
    """The table rows of `model` in the output, as tokens without note markers."""
    return [[t for t in line.split() if t != "*"] for line in output.splitlines()
            if line.split()[:1] == [model]]


def _expected(table, model: str) -> list[list[str]]:
    """Each sub-table's rows of `model`, as `reference` prints them: name, settings, the
    row label (if the sub-table has one), the values with one decimal."""
    out = []
    for title in table.tables():
        columns = [c for c in table.columns if c.table == title]
        labels = list(dict.fromkeys(c.row for c in columns))
        for row in table.rows_of(model):
            for label in labels:
                values = [f"{row.cells[c.key]:.1f}" for c in columns if c.row == label]
                out.append([model, *map(str, row.setting.values()), *([label] if label else []),
                            *values])
    return out


@pytest.mark.parametrize(("bench", "asked", "model"), [
    ("salbench", "LLaVA-1.6-7B", "LLaVA-1.6-7B"),
    ("salbench", "llava-1.6-7b", "LLaVA-1.6-7B"),
    ("salbench", "gpt4o", "GPT-4o"),
    ("illusionbench", "qwen", "Qwen-VL"),
])
def test_model_rows_are_printed_with_their_provenance(bench, asked, model):
    table = registry.definition(bench).published()
    result = invoke("reference", bench, "--model", asked)
    assert result.exit_code == 0, result.output
    printed = _printed_rows(result.stdout, model)
    assert printed == _expected(table, model)
    others = [m for m in table.model_names() if m != model]
    assert not any(_printed_rows(result.stdout, m) for m in others)
    text = flat(result.stdout)
    (source,) = table.sources
    # The address on a line of its own, whole, its commit shortened to 12 hex digits.
    url = printed_url(source.url)
    assert f"  {url}" in result.stdout.splitlines()
    assert len(url) < len(source.url) and url.startswith(source.url[:40])
    assert source.version in text
    assert all(note in text for note in table.notes)
    for row in table.rows_of(model):  # each cell note is printed, naming its cell
        for key, note in row.cell_notes.items():
            assert f"{table.column(key).label}: {note}" in text


def test_whole_table_without_a_model():
    table = registry.definition("salbench").published()
    result = invoke("reference", "salbench")
    assert result.exit_code == 0, result.output
    for model in table.model_names():
        assert _printed_rows(result.stdout, model) == _expected(table, model)
    flagged = sum(len(r.cell_notes) for r in table.rows)
    assert f"{flagged} cells carry a note; --model NAME shows a model's." in result.stdout


def test_unknown_model_lists_the_known_names_on_one_line():
    table = registry.definition("illusionbench").published()
    result = invoke("reference", "illusionbench", "--model", "gpt-4o-mini")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "'gpt-4o-mini' matches no model" in lines[0]
    assert lines[0].endswith("known: " + ", ".join(table.model_names()))
    assert result.stdout == ""


def test_benchmark_without_published_numbers_says_which_have_them():
    result = invoke("reference", "vqa")
    assert result.exit_code == 2
    assert ("no published numbers are shipped for vqa; benchmarks with published numbers: "
            "salbench, illusionbench") in flat(result.stderr)
    result = invoke("reference", "nosuch")
    assert result.exit_code == 2 and "unknown benchmark 'nosuch'" in result.stderr


def test_departures_are_listed_harness_by_harness():
    from rich.console import Console

    from visioneval.core.published import Departure, PublishedTable
    from visioneval.report.reference_console import departures

    made = PublishedTable(
        benchmark="b", title="t", citation="c", sources=(), tolerance=0.05, protocol=(),
        settings=(), columns=(), models=(), rows=(),
        departures=(Departure("lmms-eval", "counts the ground truth's yes", "utils.py:74",
                              "always 0.5"),
                    Departure("VLMEvalKit", "pools the settings", "yorn.py:120"),
                    Departure("lmms-eval", "exact match only", "utils.py:40")))
    console = Console(width=100, record=True)
    departures(made, console)
    lines = console.export_text().splitlines()
    assert lines == ["Where the harnesses depart from the paper:", "  lmms-eval:",
                     "    - counts the ground truth's yes (utils.py:74); always 0.5",
                     "    - exact match only (utils.py:40)", "  VLMEvalKit:",
                     "    - pools the settings (yorn.py:120)"]
