"""A threshold fitted to fewer trials per level than its interval was measured to hold at
(docs/psychophysics.md, "With few trials per level") gets one line under the thresholds
table, in the terminal and on the report, within 100 columns; a design with enough trials
per level, or a threshold without an interval, gets none."""

from __future__ import annotations

import io

from rich.console import Console

from visioneval.benchmarks.psychophysics import tables
from visioneval.benchmarks.psychophysics.sections import sections
from visioneval.stats.psychometric_fit import HOLDING_LEVELS, HOLDING_TRIALS_PER_LEVEL


def _threshold(feature: str, levels: int, trials: int, **more: object) -> dict[str, object]:
    return {"feature": feature, "set_size": 4, "unit": "deg", "criterion": 0.75, "guess": 1 / 3,
            "form": "weibull", "alpha": 8.0,
            "status": "reached", "threshold": 7.6, "threshold_ci95": [5.5, 9.9],
            "slope": 0.05, "beta": 3.0, "lapse": 0.02, "n_trials": levels * trials,
            "n_levels": levels, "dispersion": 0.9, "dispersion_p": 0.5, **more}


def _metrics(*thresholds: dict[str, object]) -> dict[str, object]:
    return {"criterion": 0.75, "form": "weibull", "guess": 1 / 3, "n": 480, "n_errors": 0,
            "n_unparsed": 0, "dispersion_model": "binomial", "points": [],
            "missing_levels": [], "thresholds": list(thresholds)}


def test_a_threshold_with_few_trials_per_level_says_its_interval_may_be_too_short() -> None:
    metrics = _metrics(_threshold("orientation", 24, 7), _threshold("color", 8, 20),
                       _threshold("size", 16, 9, spread=22.5))
    notes = tables.few_trials_notes(metrics)
    assert notes == [
        "orientation (set size 4): 24 levels of 7 trials: the interval may be too short",
        "size (set size 4, spread 22.5): 16 levels of 9 trials: the interval may be too short"]
    for show in (tables.show_main, tables.show):
        out = Console(file=io.StringIO(), width=100)
        show(metrics, "psychophysics: m", out)
        lines = out.file.getvalue().splitlines()
        assert all(len(x) <= 100 for x in lines)
        assert notes[0] in lines and notes[1] in lines  # each on one line, unwrapped
        assert not any(x.startswith("color (set size 4)") for x in lines)


def test_a_measured_design_or_no_interval_gets_no_line() -> None:
    exactly = _threshold("orientation", HOLDING_LEVELS, HOLDING_TRIALS_PER_LEVEL)
    unreached = _threshold("color", 24, 5, status="not reached", threshold=None,
                           threshold_ci95=None)
    assert tables.few_trials_notes(_metrics(exactly, unreached)) == []
    uneven = _threshold("size", 3, 1, n_trials=3 * HOLDING_TRIALS_PER_LEVEL - 1)
    assert len(tables.few_trials_notes(_metrics(uneven))) == 1
    # More levels than measured to hold, even with many trials each (24 x 14 covered 92.3%).
    many = _threshold("size", HOLDING_LEVELS + 1, 40)
    assert len(tables.few_trials_notes(_metrics(many))) == 1


def test_the_report_lists_the_line_beside_the_thresholds() -> None:
    metrics = _metrics(_threshold("orientation", 24, 7))
    found = [s for s in sections(metrics) if s.title.startswith("Thresholds")]
    assert found and any(tables.few_trials_notes(metrics)[0] in getattr(b, "items", [])
                         for b in found[0].blocks)
