"""`visioneval compare` of two psychophysics runs against the loopback's simulated observer:
one overlay chart per fit both runs have, with both runs' curves and points, and the
threshold-difference test that tells a threefold orientation threshold apart, leaves equal
colour thresholds unseparated and says why a fit that was not reached gets no test; in
comparison.md, comparison.html and the terminal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_helpers import flat, invoke

from visioneval.benchmarks.psychophysics.dataset import Design, write_dataset
from visioneval.commands.loopback import ObserverFlags, build_script
from visioneval.report.charts import PALETTE

LEVELS = {"orientation": (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0),
          "color": (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0), "size": (0.1, 0.4)}


@pytest.fixture(scope="module")
def stimuli(tmp_path_factory) -> Path:
    """Detection arrays: 7 levels x 20 trials of orientation and colour, 2 of size."""
    root = tmp_path_factory.mktemp("psychophysics-compare")
    write_dataset(root, Design(experiments=("detection",), levels=LEVELS, set_sizes=(4,),
                               trials=20), seed=4)
    return root


def _run(serve, model: str, curves: str, seed: int, data: Path, out: Path) -> Path:
    """One run of `model` answered by an observer with these curves (size is guessed)."""
    script = build_script((model,), "observer", 0.0, 0.0, "500", 0,
                          observer=ObserverFlags(curves=curves, seed=seed))
    server = serve(models=(model,), answer=script.answer)
    result = invoke("psychophysics", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", model, "--data", data, "--out", out,
                    "--no-progress", "--no-cache", "--bootstrap", "50", "--no-report")
    assert result.exit_code == 0, result.output
    return out


def _plain(cell: str) -> str:
    """A Markdown cell as the terminal prints it (backslash escapes undone)."""
    return re.sub(r"\\(.)", r"\1", cell.strip())


def _difference_rows(text: str) -> dict[str, list[str]]:
    """The difference table's rows of comparison.md, by feature."""
    part = text.split("## Threshold differences")[1]
    rows = [line.strip("|").split(" | ") for line in part.splitlines()
            if line.startswith("| b (")]
    return {row[1].strip().split(" ")[0]: [c.strip() for c in row] for row in rows}


@pytest.mark.slow
def test_compare_overlays_the_curves_and_tests_the_threshold_difference(serve, stimuli,
                                                                        tmp_path):
    first = _run(serve, "a", "orientation=6:3:0.02,color=6:2.5:0.02", 1, stimuli,
                 tmp_path / "first")
    other = _run(serve, "b", "orientation=18:3:0.02,color=6:2.5:0.02", 2, stimuli,
                 tmp_path / "other")
    out = tmp_path / "compared"
    result = invoke("compare", first, other, "--out", out)
    assert result.exit_code == 0, result.output

    page = (out / "comparison.html").read_text()
    assert "<h2>Psychometric functions, run against run</h2>" in page
    charts = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    titles = [re.search(r"<title>(.*?)</title>", svg).group(1) for svg in charts]  # type: ignore[union-attr]
    assert sorted(titles) == ["color (set size 4)", "orientation (set size 4)",
                              "size (set size 4)"]
    for svg in charts:
        assert "a (first): " in svg and "b (other): " in svg  # the legend names both runs
        for colour in PALETTE[:2]:  # each run's points in its own colour
            assert f'fill="{colour}"><title>' in svg
    orientation = charts[titles.index("orientation (set size 4)")]
    for colour in PALETTE[:2]:  # both fitted curves, both thresholds with their intervals
        assert f'stroke="{colour}" stroke-width="1" class="fit"' in orientation
        assert f'stroke="{colour}" stroke-width="1" class="threshold-interval"' in orientation
    assert "<h2>Threshold differences (parametric bootstrap)</h2>" in page

    rows = _difference_rows((out / "comparison.md").read_text())
    assert set(rows) == {"orientation", "color", "size"}
    *_, ratio, ratio_span, p, verdict = rows["orientation"]
    assert verdict == "significant" and float(p) < 0.01
    low, high = (float(v) for v in ratio_span.split(" to "))
    assert low <= 3.0 <= high and low > 1.0 and ratio.startswith("×")
    difference, span = rows["orientation"][5:7]
    assert float(difference) > 0 and float(span.split(" to ")[0]) > 0
    assert rows["color"][-1] == "not significant" and float(rows["color"][-2]) > 0.05
    assert rows["size"][-1] == "no test" and rows["size"][5] == "-"
    md = (out / "comparison.md").read_text()
    assert re.search(r"b \(other\), size \(set size 4\): no threshold to compare: "
                     r"a \(first\): not reached \(.*guessing", md)
    # the terminal prints the same figures: a record per row, the table being too wide for
    # 100 columns ("column: value" pairs under the row's name)
    header = next(ln for ln in md.split("## Threshold differences")[1].splitlines()
                  if ln.startswith("| run"))
    names = [_plain(c) for c in header.strip("|").split(" | ")]
    shown = flat(result.output.split("Threshold differences")[1])
    for row in rows.values():
        cells = [_plain(c) for c in row]
        pairs = "; ".join(f"{n}: {v}" for n, v in zip(names[2:], cells[2:], strict=True))
        assert f"{cells[0]} · {cells[1]} {pairs}" in shown, (pairs, shown)
