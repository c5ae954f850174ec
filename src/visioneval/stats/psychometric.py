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


def sigmoid_inverse(f: float, alpha: float, beta: float, form: Sigmoid = "weibull") -> float:
    """The level x where F(x) = f (0 < f < 1): the inverse of `sigmoid`."""
    if form == "weibull":
        return alpha * (-math.log1p(-f)) ** (1.0 / beta)
    return alpha + math.log(f / (1.0 - f)) / beta


def criterion_level(criterion: float, alpha: float, beta: float, guess: float, lapse: float,
                    form: Sigmoid = "weibull") -> float | None:
    """The level x where ψ(x) = criterion, or None when ψ never gets there (the criterion is
    at or below the guess rate, or at or above the ceiling 1 − λ). The criterion is a
    proportion correct; it goes through γ and λ to a point of F: F = (ψ − γ)/(1 − γ − λ)."""
    f = (criterion - guess) / (1.0 - guess - lapse)
    if not 0.0 < f < 1.0:
        return None
    return sigmoid_inverse(f, alpha, beta, form)


def psi_slope(x: float, alpha: float, beta: float, guess: float, lapse: float,
              form: Sigmoid = "weibull") -> float:
    """dψ/dx at x: (1 − γ − λ)·F′(x)."""
    f = sigmoid(x, alpha, beta, form)
    if form == "weibull":
        if x <= 0:
            return 0.0
        derivative = (1.0 - f) * beta / x * (x / alpha) ** beta
    else:
        derivative = beta * f * (1.0 - f)
    return (1.0 - guess - lapse) * derivative
