"""Error bars on the report's bar charts: each whisker spans its interval on the chart's own
scale (read back from the SVG), the value sits above it, a bar without an interval or
without a value has none, and a key says what the bars mean."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from visioneval.report import charts

NS = {"s": "http://www.w3.org/2000/svg"}
KEY = "error bars: 95% interval"


def _root(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def _bars(root: ET.Element) -> dict[str, ET.Element]:
    """Bars by the first part of their hover text ("series, category")."""
    return {r.find("s:title", NS).text.split(":")[0]: r for r in root.iterfind("s:rect", NS)
            if r.find("s:title", NS) is not None}


def _lines(root: ET.Element, role: str) -> list[dict[str, float]]:
    return [{k: float(line.get(k)) for k in ("x1", "y1", "x2", "y2")}
            for line in root.iterfind("s:line", NS) if line.get("class") == role]


def _texts(root: ET.Element) -> dict[str, ET.Element]:
    return {"".join(t.itertext()): t for t in root.iterfind("s:text", NS)}


def test_vertical_whiskers_span_their_interval_on_the_bar_scale():
    svg = charts.grouped_bars(
        ["cats", "dogs", "birds"], {"A": [50.0, 80.0, None], "B": [20.0, None, 10.0]},
        "recall", "percent",
        intervals={"A": [(40.0, 60.0), None, (1.0, 2.0)], "B": [(35.0, 10.0), (5.0, 6.0), None]})
    root = _root(svg)
    bars = _bars(root)
    a_cats = bars["A, cats"]
    axis_y = float(a_cats.get("y")) + float(a_cats.get("height"))
    scale = float(a_cats.get("height")) / 50.0  # points per percent, from a bar of 50
    whiskers = _lines(root, "whisker")
    # A/cats (40..60) and B/cats (10..35, given high first); A/birds and B/dogs have no
    # value, A/dogs and B/birds no interval: no whisker for any of those.
    assert len(whiskers) == 2 and len(_lines(root, "whisker-cap")) == 4
    for name, low, high in (("A, cats", 40.0, 60.0), ("B, cats", 10.0, 35.0)):
        bar = bars[name]
        middle = float(bar.get("x")) + float(bar.get("width")) / 2
        whisker = min(whiskers, key=lambda w: abs(w["x1"] - middle))
        assert whisker["x1"] == whisker["x2"] == pytest.approx(middle, abs=0.2)  # vertical
        assert max(whisker["y1"], whisker["y2"]) == pytest.approx(axis_y - low * scale, abs=0.2)
        assert min(whisker["y1"], whisker["y2"]) == pytest.approx(axis_y - high * scale,
                                                                  abs=0.2)
    texts = _texts(root)
    assert float(texts["50.0"].get("y")) < axis_y - 60.0 * scale  # above the whisker's top
    assert float(texts["80.0"].get("y")) < float(bars["A, dogs"].get("y"))  # on its bar
    assert "95% interval 40.0 to 60.0" in bars["A, cats"].find("s:title", NS).text
    assert "interval" not in bars["A, dogs"].find("s:title", NS).text
    assert KEY in texts


def test_no_intervals_no_whiskers_and_no_key():
    for intervals in (None, {"A": [None, None]}):
        root = _root(charts.grouped_bars(["x", "y"], {"A": [10.0, 20.0]}, "t", "percent",
                                         intervals=intervals))
        assert not _lines(root, "whisker") and KEY not in _texts(root)


def test_without_ymax_the_axis_reaches_the_interval():
    root = _root(charts.grouped_bars(["x"], {"score": [0.5]}, "t", "score", ymax=None,
                                     intervals={"score": [(0.2, 0.9)]}))
    (whisker,) = _lines(root, "whisker")
    bar = _bars(root)["score, x"]
    axis_y = float(bar.get("y")) + float(bar.get("height"))
    top = axis_y - float(bar.get("height")) / 0.5 * 0.9
    assert min(whisker["y1"], whisker["y2"]) == pytest.approx(top, abs=0.2)
    assert top > 30  # below the title, inside the plot
    assert "0.90" in _tip(bar)


def _tip(bar: ET.Element) -> str:
    return bar.find("s:title", NS).text


def test_evaluator_whiskers_are_horizontal_and_the_value_follows_them():
    svg = charts.evaluator_bars(["judge:a", "validator:b", "validator:c"], [62.5, None, 95.0],
                                "pass rate", [(40.0, 85.0), (10.0, 20.0), None])
    root = _root(svg)
    bars = list(_bars(root).values())
    first = bars[0]
    left = float(first.get("x"))
    scale = float(first.get("width")) / 62.5
    (whisker,) = _lines(root, "whisker")  # b has no rate, c no interval
    assert whisker["y1"] == whisker["y2"] == pytest.approx(
        float(first.get("y")) + float(first.get("height")) / 2, abs=0.2)
    assert (whisker["x1"], whisker["x2"]) == (pytest.approx(left + 40 * scale, abs=0.2),
                                              pytest.approx(left + 85 * scale, abs=0.2))
    texts = _texts(root)
    assert float(texts["62.5"].get("x")) > whisker["x2"]
    assert "95% interval 40.0 to 85.0" in _tip(first)
    assert KEY in texts and "n/a (no result)" in texts
    plain = _root(charts.evaluator_bars(["judge:a"], [62.5], "pass rate"))
    assert not _lines(plain, "whisker") and KEY not in _texts(plain)
