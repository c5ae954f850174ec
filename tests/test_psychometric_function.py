"""ψ's fixed points, as Wichmann & Hill (2001) define the function."""

import math

import pytest

from visioneval.stats.psychometric import psi, sigmoid


def test_weibull_at_alpha_is_one_minus_one_over_e_and_zero_at_zero():
    assert sigmoid(2.0, 2.0, 3.0) == pytest.approx(1 - 1 / math.e)
    assert sigmoid(0.0, 2.0, 3.0) == 0.0


def test_logistic_at_alpha_is_one_half():
    assert sigmoid(5.0, 5.0, 1.5, "logistic") == pytest.approx(0.5)


def test_psi_spans_guess_to_one_minus_lapse():
    assert psi(0.0, 2.0, 3.0, 1 / 3, 0.02) == pytest.approx(1 / 3)
    assert psi(1e6, 2.0, 3.0, 1 / 3, 0.02) == pytest.approx(0.98)
