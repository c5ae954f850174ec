"""measure/overdispersion.py: its observer, beta-binomial likelihood and a tiny coverage run
behave as their formulas say."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from scipy.stats import betabinom

SCRIPT = Path(__file__).parents[1] / "measure" / "overdispersion.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("overdispersion", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_beta_binomial_likelihood_is_scipys_without_the_binomial_coefficient(script) -> None:
    k, n, psi = np.array([3.0, 11.0, 20.0]), np.array([20.0, 20.0, 20.0]), np.array(
        [0.4, 0.6, 0.9])
    eta = 0.3
    v = 1 / eta ** 2 - 1
    expected = sum(betabinom.logpmf(k, n, psi * v, (1 - psi) * v)
                   - np.log([math.comb(20, int(i)) for i in k]))
    assert script.beta_binomial_log_likelihood(k, n, psi, eta) == pytest.approx(expected)
    binomial = (k * np.log(psi) + (n - k) * np.log1p(-psi)).sum()
    assert script.beta_binomial_log_likelihood(k, n, psi, 0.0) == pytest.approx(binomial)


def test_eta_is_found_where_levels_vary_more_than_binomially(script) -> None:
    n, psi = np.full(8, 20.0), np.full(8, 0.5)
    assert script.fit_eta(np.full(8, 10.0), n, psi) == 0.0  # less spread than binomial
    assert script.fit_eta(np.array([1.0, 19, 2, 18, 0, 20, 3, 17]), n, psi) > 0.5


def test_the_true_threshold_is_where_the_mean_curve_reaches_the_criterion(script) -> None:
    flat = script.observer(0.0)
    assert flat.mean_psi(flat.true_threshold()) == pytest.approx(0.75)
    spread = script.observer(1.0)
    assert spread.mean_psi(spread.true_threshold()) == pytest.approx(0.75)
    assert spread.true_threshold() > flat.true_threshold()  # the mean curve is shallower


def test_a_tiny_run_summarises_every_method(script) -> None:
    cells = script.measure(3, 20, 1, taus=(0.0,), sharings=("each level",), mapper=map)
    (cell,) = cells
    assert cell.runs == 3 and len(cell.coverage) == len(script.METHODS)
    assert all(0.0 <= c <= 1.0 for c in cell.coverage)
    assert "each level" in script.row(cell)
