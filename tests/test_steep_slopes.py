"""measure/steep_slopes.py: its bounded variant is visioneval's fit, its unbounded and soft
variants reach slopes the bound forbids, and a tiny run summarises every cell."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from visioneval.stats.psychometric_fit import fit

SCRIPT = Path(__file__).parents[1] / "measure" / "steep_slopes.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("steep_slopes", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_bounded_is_the_fit_and_the_others_go_steeper(script) -> None:
    levels = script.designs()["1.5x spacing"]
    bound = script.width_bound(levels)
    assert bound == pytest.approx(3.82, abs=0.01)
    # a step between the 4th and 5th level: only a function steeper than the bound fits it
    k = np.array([13, 14, 13, 15, 39, 40, 40, 39])
    n = [script.TRIALS] * len(levels)
    found = fit(levels, k, n, script.GUESS, resamples=0)
    bounded = script.fit_variant("bounded", levels, k, 20, 1)
    assert bounded.threshold == found.threshold and found.beta == pytest.approx(bound)
    data = script.pf._prepare(levels, k, n, script.GUESS, "weibull", 0.75, (0.0, 0.1))
    free = script.pf._best_fit(
        script.replace(data, bounds=[data.bounds[0], (math.log(0.3), math.log(30.0)),
                                     data.bounds[2]]), data.k)
    soft = script._penalised(bound).best_fit(
        script.replace(data, bounds=[data.bounds[0], (math.log(0.3), math.log(30.0)),
                                     data.bounds[2]]), data.k)
    assert bound < math.exp(soft[1]) < math.exp(free[1])  # the penalty pulls, not holds
    for variant in ("unbounded", "soft"):
        outcome = script.fit_variant(variant, levels, k, 20, 1)
        assert outcome.threshold is not None and levels[3] < outcome.threshold < levels[4]


def test_a_tiny_run_fills_every_cell(script, monkeypatch) -> None:
    monkeypatch.setattr(script, "BETAS", (6.0,))
    monkeypatch.setattr(script, "MC_RESAMPLES", 20)
    cells = script.measure(runs=1, resamples=10, workers=1)
    assert [(d, v) for d, _, v, _ in cells] == [
        (d, v) for d in script.designs() for v in script.VARIANTS]
    for *_, cell in cells:
        assert cell.runs == 1 and cell.coverage in (0.0, 1.0)
    lines = script.table(cells)
    assert len(lines) == 2 + len(cells) and "(5.73)" in lines[2]


def test_coverage_counts_open_ends_and_misses(script) -> None:
    outcomes = [script.Outcome(1.1, (0.9, math.inf)), script.Outcome(0.8, (0.7, 0.95)),
                script.Outcome(None, None), script.Outcome(1.0, (-math.inf, 1.2))]
    cell = script.summarise(outcomes, 1.0)
    assert cell.reached == 3 and cell.coverage == 0.5
    assert cell.median_error == pytest.approx(0.0) and math.isinf(cell.median_width)
