"""The units a benchmark gives `visioneval explain` (`SharesGap.gap_units`) add up to the very
headlines its metrics.json reports, under every protocol and label set, on a run of its
synthetic set; and the paired bootstrap of harness.gapboot behaves as a paired interval
should (zero width for identical readings, narrower than two independent intervals)."""

from __future__ import annotations

import pytest
from cli_helpers import invoke

from visioneval.core import registry
from visioneval.core.capabilities import ExplainsGap, SharesGap
from visioneval.core.gap import GapShare, GapUnit
from visioneval.core.records import Record
from visioneval.core.rundir import load
from visioneval.harness.gapboot import UnitTable

SYNTH_ROWS = {"mmvp": "40", "pope": "30", "naturalbench": "40", "hallusionbench": "40",
              "blink": "40", "cvbench": "60", "blindtest": "12"}


def explained() -> list[str]:
    return [name for name in registry.names()
            if isinstance(registry.definition(name), ExplainsGap)]


@pytest.mark.parametrize("name", [pytest.param(n, marks=[] if n == "mmvp"
                                               else [pytest.mark.slow])
                                  for n in explained()])
def test_units_add_up_to_the_reported_headlines(name, tmp_path):
    definition = registry.definition(name)
    data, out = tmp_path / "data", tmp_path / "run"
    made = invoke("data", f"synth-{name}", "--out", data, "--n", SYNTH_ROWS.get(name, "40"))
    assert made.exit_code == 0, made.output
    ran = invoke(name, "--backend", "builtin", "--model", "random", "--data-dir", data,
                 "--out", out, "--no-progress", "--no-report")
    assert ran.exit_code == 0, ran.output
    view = load(out)
    benchmark = definition.build_to_read(dict(view.info.options))
    if not isinstance(benchmark, SharesGap):
        pytest.skip(f"{name} gives no units: explain combines its steps' intervals as if "
                    "independent")
    assert isinstance(definition, ExplainsGap)
    headlines = definition.gap_headlines(view.metrics)
    assert headlines is not None
    table = UnitTable(headlines.weights)
    table.add("", benchmark.gap_units(view.iter_records()))
    for h in headlines.headlines:
        found = table.value(("", (h.protocol, h.labels)))
        assert found == pytest.approx(h.value, abs=1e-6), (h.protocol, h.labels)
    # A failed request is left out of a headline, never scored wrong: the units leave it
    # out of the same headlines as the metrics do.
    records = [failed(r) if i % 5 == 2 else r for i, r in enumerate(view.iter_records())]
    headlines = definition.gap_headlines(benchmark.summarize(records))
    assert headlines is not None
    table = UnitTable(headlines.weights)
    table.add("", benchmark.gap_units(records))
    for h in headlines.headlines:
        found = table.value(("", (h.protocol, h.labels)))
        assert found == pytest.approx(h.value, abs=1e-6), (h.protocol, h.labels, "failed")


def failed(record: Record) -> Record:
    """The record as a request that failed (the server's error, no answer)."""
    response = record.response.model_copy(update={"error": "HTTP 500", "text": None})
    return record.model_copy(update={"response": response})


def units(verdicts_a, verdicts_b, cluster=lambda i: f"c{i}"):
    return [GapUnit(cluster(i), {("p", "original"): GapShare("all", a, 1.0),
                                 ("q", "original"): GapShare("all", b, 1.0)})
            for i, (a, b) in enumerate(zip(verdicts_a, verdicts_b, strict=True))]


def test_identical_readings_differ_by_exactly_nothing():
    table = UnitTable(resamples=200)
    table.add("", units([1, 0, 1, 1] * 25, [1, 0, 1, 1] * 25))
    assert table.value(("", ("p", "original"))) == pytest.approx(75.0)
    assert table.difference(("", ("p", "original")), ("", ("q", "original"))) == (0.0, 0.0)


def test_a_paired_interval_is_narrower_than_two_independent_ones():
    a = [1.0 if i % 10 < 7 else 0.0 for i in range(400)]
    b = [0.0 if i % 20 == 0 else v for i, v in enumerate(a)]  # 20 of the 280 right lost
    table = UnitTable(resamples=500)
    table.add("", units(a, b))
    low, high = table.difference(("", ("p", "original")), ("", ("q", "original")))
    assert low < -5.0 < high and high < 0  # -20/400 = -5 points, never a gain
    # each accuracy alone has a half-width near 1.96 * sqrt(.7 * .3 / 400) = 4.5 points
    assert high - low < 2 * 4.5


def test_strata_weigh_as_given_and_equally_otherwise():
    made = [GapUnit(f"c{i}", {("p", "original"): GapShare(s, v, 1.0)})
            for i, (s, v) in enumerate([("x", 1), ("x", 1), ("x", 0), ("y", 0)])]
    equal = UnitTable()
    equal.add("", made)
    assert equal.value(("", ("p", "original"))) == pytest.approx(100 * (2 / 3 + 0) / 2)
    weighted = UnitTable({("p", "original"): {"x": 0.75, "y": 0.25}})
    weighted.add("", made)
    assert weighted.value(("", ("p", "original"))) == pytest.approx(100 * 0.75 * 2 / 3)
