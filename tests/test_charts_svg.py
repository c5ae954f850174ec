"""The run report's charts: SVG written by a jinja2 template, well-formed, every value and
label shown and escaped; and a run report that never loads matplotlib (importing
and drawing with it was about 1 s of a 1,000-sample run's end-of-run report)."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from visioneval.report import charts
from visioneval.report.synthrun import write_run

NS = {"s": "http://www.w3.org/2000/svg"}
EVIL = "<script>alert(1)</script> & co"


def _parse(svg: str) -> ET.Element:
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    return ET.fromstring(svg)  # raises on anything that is not well-formed XML


def _texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iterfind(".//s:text", NS)]


def _bars(root: ET.Element) -> list[ET.Element]:
    """Rectangles that carry a hover title: the bars and cells (not legend squares)."""
    return [r for r in root.iterfind("s:rect", NS) if r.find("s:title", NS) is not None]


def test_grouped_bars_print_every_value_and_na():
    svg = charts.grouped_bars(["color", "size", EVIL], {"Precision": [90.0, None, 12.345],
                                                        "Recall": [50.0, 100.0, 0.0]},
                              "P3: per-class", "percent")
    root = _parse(svg)
    texts = _texts(root)
    assert len(_bars(root)) == 6
    assert {"90.0", "n/a", "12.3", "50.0", "100.0", "0.0"} <= set(texts)
    assert {"P3: per-class", "percent", "color", EVIL, "Precision", "Recall"} <= set(texts)
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "&amp; co" in svg
    ticks = [float(t) for t in texts if t.replace(".", "").isdigit() and "." not in t]
    assert max(ticks) == 100  # 0..110: a tick every 20 or 25 up to 100
    bars = {r.find("s:title", NS).text: float(r.get("height")) for r in _bars(root)}
    full, half = bars["Recall, size: 100.0"], bars["Recall, color: 50.0"]
    assert half == pytest.approx(full / 2, abs=0.2) and bars["Precision, size: n/a"] == 0


def test_grouped_bars_one_series_has_no_legend_and_two_decimals_without_ymax():
    svg = charts.grouped_bars(["a", "b"], {"score": [0.425, 0.9]}, "scores", "score",
                              ymax=None)
    texts = _texts(_parse(svg))
    assert {"0.42", "0.90"} <= set(texts) or {"0.43", "0.90"} <= set(texts)
    assert "score" in texts and texts.count("score") == 1  # the y label, no legend entry


def test_grouped_bars_rotate_long_labels_inside_the_picture():
    root = _parse(charts.grouped_bars(["a very long group name indeed", "b"],
                                      {"accuracy": [10.0, 20.0]}, "t", "percent"))
    rotated = [t for t in root.iterfind(".//s:text", NS) if "rotate(-30" in
               t.get("transform", "")]
    assert len(rotated) == 2
    first = rotated[0]
    reach = float(first.get("x")) - 0.87 * charts.text_width("a very long group name indeed")
    assert reach >= 0


def test_stacked_bars_white_values_from_seven():
    svg = charts.stacked_bars(["in shape prompt", "out scene prompt"],
                              {"shape": [50.0, 6.9], "texture (scene)": [40.0, 3.1],
                               "rest": [10.0, 90.0]}, "what the answers name")
    root = _parse(svg)
    assert len(_bars(root)) == 6
    white = ["".join(t.itertext()) for t in root.iterfind(".//s:text", NS)
             if t.get("fill") == "#fff"]
    assert sorted(white) == ["10", "40", "50", "90"]
    assert {"shape", "texture (scene)", "rest", "percent", "0", "100"} <= set(_texts(root))
    widths = [float(r.get("width")) for r in _bars(root)]
    assert sum(widths[:3]) == pytest.approx(sum(widths[3:]), abs=0.5)  # both rows 100%


def _hue(colour: str) -> tuple[float, float]:
    import colorsys

    hue, saturation, _ = colorsys.rgb_to_hsv(*(int(colour[i:i + 2], 16) / 255
                                               for i in (1, 3, 5)))
    return hue * 360, saturation


def test_series_colours_carry_no_verdict_and_a_miss_is_grey():
    """A series is never green or red (a reader takes them for right and wrong); the
    stacked bars take the colours they are given, in the bars and the legend alike."""
    for colour in charts.PALETTE:
        hue, saturation = _hue(colour)
        assert saturation < 0.25 or not (75 <= hue <= 165 or hue <= 12 or hue >= 345), colour
    assert _hue(charts.MISS)[1] == 0 and _hue(charts.RIGHT)[0] == pytest.approx(123, abs=10)
    svg = charts.stacked_bars(["ICON shape prompt"], {"shape": [20.0], "texture (scene)": [30.0],
                                                      "named neither": [50.0]},
                              "what the answers name",
                              colours=(charts.PALETTE[0], charts.PALETTE[2], charts.MISS))
    root = _parse(svg)
    fills = {r.find("s:title", NS).text.split(": ")[0]: r.get("fill") for r in _bars(root)}
    assert fills == {"ICON shape prompt, shape": charts.PALETTE[0],
                     "ICON shape prompt, texture (scene)": charts.PALETTE[2],
                     "ICON shape prompt, named neither": charts.MISS}
    legend = [r.get("fill") for r in root.iterfind(".//s:rect", NS)
              if r.find("s:title", NS) is None and r.get("width") == "10"]
    assert legend == [charts.PALETTE[0], charts.PALETTE[2], charts.MISS]


def test_heatmap_counts_in_cells_dark_cells_white():
    svg = charts.heatmap(["color", EVIL], ["color", EVIL, "(none)"], [[30, 2, 0], [3, 25, 9]],
                         "true vs predicted", "predicted", "true")
    root = _parse(svg)
    cells = _bars(root)
    assert len(cells) == 6
    fills = [c.get("fill") for c in cells]
    assert fills[0] == charts.BLUES[-1] and fills[2] == charts.BLUES[0]  # peak, zero
    white = sorted("".join(t.itertext()) for t in root.iterfind(".//s:text", NS)
                   if t.get("fill") == "#fff")
    assert white == ["25", "30"]
    assert {"30", "2", "0", "3", "9", "predicted", "true", "(none)", EVIL} <= set(_texts(root))
    assert "<script>" not in svg


def test_blues_scale_runs_light_to_dark():
    lightness = [sum(int(charts.blue(s / 10)[k:k + 2], 16) for k in (1, 3, 5))
                 for s in range(11)]
    assert lightness == sorted(lightness, reverse=True) and lightness[0] > lightness[-1]


def test_evaluator_bars_values_and_no_result():
    svg = charts.evaluator_bars(["judge:image-description", f"script:{EVIL}"], [62.5, None],
                                "pass rate (errors excluded)")
    root = _parse(svg)
    assert len(_bars(root)) == 2
    assert {"62.5", "n/a (no result)", "judge:image-description", f"script:{EVIL}",
            "percent"} <= set(_texts(root))
    assert "<script>" not in svg


@pytest.mark.slow
def test_a_run_report_never_imports_matplotlib(synth_data, illusion_data, tmp_path):
    runs = [write_run(tmp_path / "sal", "salbench",
                      {"configs": ["P3"], "data_dir": str(synth_data)}, 40),
            write_run(tmp_path / "ill", "illusionbench",
                      {"protocol": "all", "data_dir": str(illusion_data)}, 40)]
    script = ("import sys; from pathlib import Path; import visioneval; "
              "from visioneval.report.page import write_report; "
              "[write_report(Path(p)) for p in sys.argv[1:]]; "
              "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))")
    out = subprocess.run([sys.executable, "-c", script, *map(str, runs)], check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "[]"
    for run in runs:
        page = (run / "report.html").read_text()
        assert page.count('<svg xmlns="http://www.w3.org/2000/svg" class="chart"') >= 2
