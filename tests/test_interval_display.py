"""Intervals where people read results: real runs against the loopback server (IllusionBench,
vqa) and validator-only `evaluate` runs show each headline metric's 95% interval in the
terminal table, the report's table and CSV, draw it as an error bar, and show "-" and no
whisker for a metric that has none."""

from __future__ import annotations

import csv
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import yaml
from cli_helpers import invoke, load
from helpers import png_bytes

EXAMPLE = Path(__file__).parent.parent / "examples" / "vqa"


class _Tables(HTMLParser):
    """Every <table>'s rows as lists of cell texts, header row included."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self.tables:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None


def tables(page: str) -> list[list[list[str]]]:
    parser = _Tables()
    parser.feed(page)
    return parser.tables


def table_with(page: str, column: str) -> list[dict[str, str]]:
    """The rows of the first table with this column, as dicts (later duplicate names are
    suffixed #2)."""
    for rows in tables(page):
        if rows and column in rows[0]:
            names: list[str] = []
            for name in rows[0]:
                names.append(name if name not in names else f"{name}#2")
            return [dict(zip(names, row, strict=True)) for row in rows[1:]]
    raise AssertionError(f"no table with column {column!r}")


def shown(bounds: list[float]) -> str:
    """How an interval of fractions reads in tables: percent, one decimal."""
    return f"{100 * bounds[0]:.1f} to {100 * bounds[1]:.1f}"


def beside(value: float, bounds: list[float]) -> str:
    """How the terminal's main tables read a value with its interval: "12.5 [0.0, 25.0]"."""
    return f"{100 * value:.1f} [{100 * bounds[0]:.1f}, {100 * bounds[1]:.1f}]"


def whiskers(page: str) -> int:
    return page.count('class="whisker"')


def test_illusionbench_run_shows_recall_intervals(serve, illusion_data, tmp_path):
    server = serve(answer=lambda prompt: "Animal" if "SCENE" not in prompt.text.upper()
                   else "Forest")
    out = tmp_path / "run"
    result = invoke("illusionbench", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--data-dir", illusion_data,
                    "--subsets", "ICON", "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    ci = {(p, t): metrics[p]["ICON"][t]["recall_ci95"] for p in metrics
          for t in ("shape", "scene")}
    # terminal: each recall beside its interval; the quirks variant of the original rule
    # has its own
    quirks = metrics["original"]["ICON"]["quirks"]
    cells = {}
    for line in result.stdout.splitlines():
        found = re.match(r"(?:ICON)?\s+(original|quirks fixed|lmms-strict|lmms-recall)\s+"
                         r"(\S+ \[[^]]*\])\s+(?:[+-]\S+\s+)?(\S+ \[[^]]*\])", line)
        if found:
            cells[found.group(1)] = [found.group(2), found.group(3)]
    assert cells["original"] == [beside(metrics["original"]["ICON"]["shape_recall"],
                                        ci["original", "shape"]),
                                 beside(metrics["original"]["ICON"]["scene_recall"],
                                        ci["original", "scene"])]
    assert cells["lmms-strict"][1] == beside(metrics["lmms-strict"]["ICON"]["scene_recall"],
                                             ci["lmms-strict", "scene"])
    assert cells["quirks fixed"] == [beside(quirks["shape_recall"], quirks["shape_recall_ci95"]),
                                     beside(quirks["scene_recall"], quirks["scene_recall_ci95"])]
    # report: the recall table's interval columns, and one whisker per bar of each chart
    page = (out / "report.html").read_text()
    rows = {r["protocol"]: r for r in table_with(page, "shape 95% interval")}
    assert rows["original"]["shape 95% interval"] == shown(ci["original", "shape"])
    assert rows["lmms-recall"]["scene 95% interval"] == shown(ci["lmms-recall", "scene"])
    assert rows["quirks fixed"]["shape 95% interval"] == shown(quirks["shape_recall_ci95"])
    assert whiskers(page) == 2 * len(metrics)  # shape and scene chart, a bar per protocol
    assert "error bars: 95% interval" in page
    first = next(csv.DictReader((out / "protocols.csv").open()))
    low, high = ci["original", "shape"]
    assert (first["shape_ci95_low_pct"], first["shape_ci95_high_pct"]) == \
        (f"{100 * low:.1f}", f"{100 * high:.1f}")


def test_vqa_run_shows_accuracy_intervals_and_a_dash_for_one_sample(serve, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(EXAMPLE / "images", data / "images")
    rows = [json.loads(line) for line in (EXAMPLE / "questions.jsonl").read_text()
            .splitlines()]
    rows[0]["category"] = "alone"  # one sample: no interval
    (data / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    server = serve(answer=lambda prompt: "B")
    out = tmp_path / "run"
    result = invoke("vqa", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data", data / "q.jsonl", "--scorer", "choice",
                    "--group-col", "category", "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    groups = metrics["groups"]
    assert "accuracy_ci95" not in groups["alone"] and "accuracy_ci95" in groups["count"]
    terminal = {line.split()[0]: line for line in result.stdout.splitlines()
                if line.split() and line.split()[0] in (*groups, "overall")}
    overall = metrics["overall"]
    assert terminal["overall"].rstrip().endswith(beside(overall["accuracy"],
                                                        overall["accuracy_ci95"]))
    assert terminal["alone"].rstrip().endswith(f" {100 * groups['alone']['accuracy']:.1f}")
    page = (out / "report.html").read_text()
    table = {r["group"]: r for r in table_with(page, "accuracy 95% interval")}
    assert table["count"]["accuracy 95% interval"] == shown(groups["count"]["accuracy_ci95"])
    assert table["alone"]["accuracy 95% interval"] == "-"
    assert table["alone"]["accuracy"] != "-"  # the accuracy itself is there
    assert whiskers(page) == len(groups) - 1  # every group's bar but the lone sample's
    found = {r["group"]: r for r in csv.DictReader((out / "results.csv").open())}
    assert found["alone"]["accuracy_ci95_low"] == found["alone"]["accuracy_ci95_high"] == ""
    assert found["overall"]["accuracy_ci95_high"] == \
        f"{100 * metrics['overall']['accuracy_ci95'][1]:.1f}"


def test_evaluate_run_shows_pass_rate_intervals(tmp_path):
    (tmp_path / "a.png").write_bytes(png_bytes())
    cases = [{"id": f"c{i}", "input": "Count.", "images": ["a.png"],
              "output": f"{i} bottles, 3 cans", "expected_output": "2 bottles, 3 cans",
              "evaluators": [{"validator": "count"}]} for i in range(6)]
    cases[0]["evaluators"].append({"validator": "chart"})  # one result: no interval
    cases[0]["expected_output"] = cases[0]["output"] = "0 bottles, 3 cans, 58%"
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases))
    out = tmp_path / "run"
    result = invoke("evaluate", tmp_path / "cases.yaml", "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    blocks = load(out)["evaluators"]
    count = blocks["validator:count"]
    assert count["pass_rate"] == 2 / 6 and count["pass_rate_se"] > 0
    low, high = count["pass_rate_ci95"]
    assert 0 <= low < 2 / 6 < high <= 1
    assert blocks["validator:chart"]["pass_rate_ci95_unavailable"] == \
        "1 scored sample: no interval"
    lines = {cells[0]: cells[1:] for cells in (re.split(r"\s{2,}", line.strip())
                                                for line in result.stdout.splitlines()
                                                if line.startswith("validator"))}
    assert lines["validator:count"][2] == beside(count["pass_rate"], count["pass_rate_ci95"])
    assert lines["validator:chart"][2] == "100.0"  # one result: its rate, no interval
    page = (out / "report.html").read_text()
    table = {r["evaluator"]: r for r in table_with(page, "pass rate 95% interval")}
    assert table["validator:count"]["pass rate 95% interval"] == shown(count["pass_rate_ci95"])
    assert table["validator:chart"]["pass rate 95% interval"] == "-"
    assert whiskers(page) == 1
