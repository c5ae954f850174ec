"""The published tables visioneval ships, checked against the source notes' own text
(copies in tests/reference_notes/): every value of the notes' tables is parsed from the
Markdown and compared with the shipped data, and so are the notes' sentences that state
values or whole-table facts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from visioneval.benchmarks.illusionbench.published import source
from visioneval.core import registry
from visioneval.core.published import name_key

NOTES = Path(__file__).parent / "reference_notes"
TASKS = ("D", "R", "VR")


def _section(note: str, number: int) -> str:
    text = (NOTES / note).read_text()
    start = text.index(f"\n## {number}.")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def _table_rows(section: str) -> list[list[str]]:
    """The body rows of the section's first Markdown table, cells stripped."""
    lines = [line.strip() for line in section.splitlines() if line.lstrip().startswith("|")]
    assert len(lines) > 2 and set(lines[1].replace("|", "").strip()) <= set("-: ")
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines[2:]]


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d+\.\d+", text)]


@pytest.fixture(scope="module")
def salbench():
    return registry.definition("salbench").published()


@pytest.fixture(scope="module")
def illusionbench():
    return registry.definition("illusionbench").published()


def _row(table, model: str, shots: int):
    found = table.find_model(model)
    assert found is not None, f"{model} from the notes is not shipped"
    rows = [r for r in table.rows_of(found.name) if r.setting["shots"] == shots]
    assert len(rows) == 1, (model, shots)
    return rows[0]


def test_every_salbench_value_of_the_notes_table_is_shipped(salbench):
    rows = _table_rows(_section("salbench.md", 4))
    assert len(rows) == 10
    checked = 0
    for label, p3, o3 in rows:
        model, shots = re.fullmatch(r"(.+) \((\d)\)", label).groups()
        row = _row(salbench, model, int(shots))
        for image_set, cell in (("P3", p3), ("O3", o3)):
            em, f1 = (_numbers(part) for part in cell.split(";"))
            assert len(em) == len(f1) == 3, cell
            for task, value in zip(TASKS, em, strict=True):
                assert row.cells[f"{image_set}/{task}/em"] == value, (label, image_set, task)
            for task, value in zip(TASKS, f1, strict=True):
                assert row.cells[f"{image_set}/{task}/f1"] == value, (label, image_set, task)
            checked += 6
    assert checked == 120


def test_the_notes_per_class_values_are_shipped(salbench):
    text = _section("salbench.md", 4)
    sentence = re.search(r"Per-class F1 for GPT-4o, 0-shot, P3 Detection: (.+?)\.\n", text)
    pairs = re.findall(r"(\w+) (\d+\.\d)", sentence.group(1))
    assert [p[0] for p in pairs] == ["orientation", "color", "size"]
    row = _row(salbench, "GPT-4o", 0)
    for label, value in pairs:
        assert row.cells[f"P3/D/f1/{label}"] == float(value)
    # §3's worked example: GPT-4o's O3 Detection per-class F1 (the README's seven columns)
    # average to its F1 Overall, and its exact match is another number.
    metrics = _section("salbench.md", 3)
    example = re.search(r"mean\(([\d., ]+)\) = (\d+\.\d)", metrics)
    values = sorted(_numbers(example.group(1)))
    o3 = [v for k, v in row.cells.items() if k.startswith("O3/D/f1/")]
    assert len(o3) == 7 and sorted(o3) == values
    assert row.cells["O3/D/f1"] == float(example.group(2))
    em = re.search(r"GPT-4o's O3 Detection EM is (\d+\.\d)", metrics).group(1)
    assert row.cells["O3/D/em"] == float(em)


def test_whole_tables_agree_with_the_notes_arithmetic_check(salbench):
    """The notes checked every F1 Overall cell of the README against the mean of its
    per-class F1; the shipped tables give the same counts, so every per-class cell and
    every F1 Overall cell, not only the notes' rows, is as the notes read it."""
    sentence = re.search(r"(\d+) of (\d+) P3 cells and (\d+) of (\d+) O3 cells equal the "
                         r"per-class mean within 0\.1", _section("salbench.md", 3))
    p3_ok, p3_all, o3_ok, o3_all = map(int, sentence.groups())
    for image_set, ok, total in (("P3", p3_ok, p3_all), ("O3", o3_ok, o3_all)):
        agree = cells = 0
        for row in salbench.rows:
            for task in TASKS:
                per_class = [v for k, v in row.cells.items()
                             if k.startswith(f"{image_set}/{task}/f1/")]
                mean = sum(per_class) / len(per_class)
                agree += abs(mean - row.cells[f"{image_set}/{task}/f1"]) <= 0.1
                cells += 1
        assert (agree, cells) == (ok, total), image_set
        flagged = sum(1 for r in salbench.rows for k, note in r.cell_notes.items()
                      if k.startswith(image_set) and "mean of its per-class F1" in note)
        assert flagged == total - ok


def test_the_readme_inconsistency_and_paper_differences_are_carried(salbench):
    known = _section("salbench.md", 5)
    found = re.search(r"(\w+)-8B at (\d) shots on P3 VR shows (\d+\.\d) against a mean of "
                      r"(\d+\.\d)", known)
    model, shots, printed, mean = found.groups()
    row = _row(salbench, f"{model}-8B", int(shots))
    assert row.cells["P3/VR/f1"] == float(printed)
    assert f"mean of its per-class F1 is {mean}" in row.cell_notes["P3/VR/f1"]
    paper = re.search(r"\[N\] gives (\d+\.\d) for LLaVA's O3 Detection F1 \(README: (\d+\.\d)\) "
                      r"and (\d+\.\d) for Qwen2-VL-72B \(README: (\d+\.\d)\)",
                      _section("salbench.md", 4))
    llava_paper, llava_readme, qwen_paper, qwen_readme = paper.groups()
    for model, in_paper, in_readme in (("LLaVA-1.6-7B", llava_paper, llava_readme),
                                       ("Qwen2-VL-72B", qwen_paper, qwen_readme)):
        row = _row(salbench, model, 0)
        assert row.cells["O3/D/f1"] == float(in_readme)  # the README's value is shipped
        assert in_paper in row.cell_notes["O3/D/f1"]  # and the paper's beside it
        assert any(in_paper in note and in_readme in note for note in salbench.notes)


def test_every_illusionbench_value_of_the_notes_table_is_shipped(illusionbench):
    section = _section("illusionbench.md", 4)
    header = [line for line in section.splitlines() if line.startswith("| model")][0]
    columns = [c.strip() for c in header.strip().strip("|").split("|")][1:]
    rows = _table_rows(section)
    assert len(rows) == 14 and len(columns) == 6
    checked = 0
    for label, *values in rows:
        row = _row(illusionbench, label, 0)
        for column, value in zip(columns, values, strict=True):
            subset, task = column.split(" ")
            assert row.cells[f"{subset}/{task}"] == float(value), (label, column)
            checked += 1
    assert checked == 84
    # Read off a figure to about ±0.1 (the notes' words), and the shipped tolerance says so.
    assert re.search(r"accurate to about ±0\.1", section)
    assert illusionbench.tolerance == 0.1
    # The full subsets the published numbers cover, as the notes' split table gives them.
    splits = {r[0].strip("`"): int(r[1].replace(",", ""))
              for r in _table_rows(_section("illusionbench.md", 1))}
    assert {f"Illusion_{k}": v for k, v in source().full_rows.items()} == \
        {k: v for k, v in splits.items() if k != "total"}


def test_the_provenance_names_source_version_and_meaning(salbench, illusionbench):
    for table, host in ((salbench, "github.com/salbench/salbench/blob/"),
                        (illusionbench, "github.com/arshiahemmat/IllusionBench/blob/")):
        (source,) = table.sources
        assert host in source.url and re.search(r"/blob/[0-9a-f]{40}/", source.url)
        assert re.search(r"commit [0-9a-f]{7}", source.version)
        assert table.units == "percent" and table.protocol and table.notes
        assert all(c.meaning and c.label for c in table.columns)
    meanings = {c.key: c.meaning for c in salbench.columns}
    assert "exact match" in meanings["O3/D/em"] and "macro F1 over the 7" in meanings["O3/D/f1"]
    assert "strict parser" in meanings["P3/VR/f1/size"]


@pytest.mark.parametrize("bench", ["salbench", "illusionbench"])
def test_model_names_are_unambiguous_and_find_themselves(bench):
    table = registry.definition(bench).published()
    owners: dict[str, str] = {}
    for model in table.models:
        for name in model.names:
            assert owners.setdefault(name_key(name), model.name) == model.name, name
            assert table.find_model(name) is model
    for row in table.rows:  # every row's cells are complete
        assert len(row.cells) == len(table.columns)


@pytest.mark.parametrize(("name", "expected"), [
    ("llava-1.6-7b", "LLaVA-1.6-7B"), ("LLaVA 1.6 7B", "LLaVA-1.6-7B"),
    ("llava-v1.6-7b", "LLaVA-1.6-7B"), ("LLava 1.6-7B", "LLaVA-1.6-7B"),
    ("openai/gpt-4o-2024-08-06", "GPT-4o"), ("GPT4O", "GPT-4o"),
    ("Qwen/Qwen2-VL-72B-Instruct", "Qwen2-VL-72B"), ("idefic2-8b", "Idefics2-8B"),
    ("claude-sonet", "Claude-sonnet"),
    ("gpt-4o-mini", None), ("llava:7b", None), ("qwen2-vl", None), ("", None),
])
def test_names_match_forgivingly_but_never_by_prefix(salbench, name, expected):
    found = salbench.find_model(name)
    assert (found and found.name) == expected


def test_generic_code_names_no_benchmark():
    """The CLI, compare and the published-table types ask a benchmark's definition."""
    src = Path(__file__).parents[1] / "src" / "visioneval"
    for path in ("core/published.py", "report/reference.py",
                 "report/reference_console.py", "cli/reference.py",
                 "report/templates/reference.html"):
        text = (src / path).read_text().lower()
        assert "salbench" not in text and "illusionbench" not in text, path
