"""The psychometric function ψ(x) = γ + (1 − γ − λ)·F(x; α, β) (Wichmann & Hill 2001, "The
psychometric function: I. Fitting, sampling, and goodness of fit"): γ the guess rate fixed
by the task (1/m for m alternatives), λ the lapse rate, F a sigmoid of the stimulus level x
with its position α and slope β. The simulated observer and the fits share this one
definition."""

from __future__ import annotations

import math
from typing import Literal

Sigmoid = Literal["weibull", "logistic"]


def sigmoid(x: float, alpha: float, beta: float, form: Sigmoid = "weibull") -> float:
    """F(x): the Weibull 1 − exp(−(x/α)^β) (x ≥ 0; F(α) = 1 − 1/e ≈ 0.632) or the logistic
    1 / (1 + exp(−β(x − α))) (F(α) = 0.5)."""
    if form == "weibull":
        return 0.0 if x <= 0 else 1.0 - math.exp(-((x / alpha) ** beta))
    return 1.0 / (1.0 + math.exp(-beta * (x - alpha)))


def psi(x: float, alpha: float, beta: float, guess: float, lapse: float,
        form: Sigmoid = "weibull") -> float:
    """ψ(x): the probability of a correct answer at level x."""
    return guess + (1.0 - guess - lapse) * sigmoid(x, alpha, beta, form)
