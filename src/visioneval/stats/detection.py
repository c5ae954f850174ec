"""Signal detection for yes/no trials with target-absent trials (Macmillan & Creelman,
"Detection Theory: A User's Guide"): d′ = z(H) − z(F) and c = −(z(H) + z(F))/2.

Rates of 0 or 1 would make z infinite, so every rate takes the log-linear correction
(Hautus 1995): 0.5 added to the hits and to the false alarms, 1 to the numbers of signal and
of noise trials. An observer who always says "yes" then has H ≈ F and d′ ≈ 0.

The 95% intervals use the standard large-sample variance (Gourevitch & Galanter 1967, as
given by Macmillan & Creelman): var(d′) = H(1−H)/(N_s φ(z_H)²) + F(1−F)/(N_n φ(z_F)²), and
var(c) = var(d′)/4, on the corrected rates and counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Detection:
    dprime: float
    criterion: float  # c: positive = conservative (says "no" more often)
    dprime_ci: tuple[float, float]
    criterion_ci: tuple[float, float]
    hit_rate: float  # corrected
    false_alarm_rate: float  # corrected


def dprime(hits: int, n_signal: int, false_alarms: int, n_noise: int) -> Detection:
    """d′ and c from hits among target-present trials and false alarms among target-absent
    trials, log-linear corrected, with 95% intervals."""
    if n_signal <= 0 or n_noise <= 0 or not 0 <= hits <= n_signal \
            or not 0 <= false_alarms <= n_noise:
        raise ValueError(f"need 0 <= hits <= n_signal and 0 <= false_alarms <= n_noise with "
                         f"both counts positive: got {hits}/{n_signal} and "
                         f"{false_alarms}/{n_noise}")
    normal = NormalDist()
    signal, noise = n_signal + 1.0, n_noise + 1.0
    h, f = (hits + 0.5) / signal, (false_alarms + 0.5) / noise
    zh, zf = normal.inv_cdf(h), normal.inv_cdf(f)
    d, c = zh - zf, -(zh + zf) / 2.0
    variance = h * (1 - h) / (signal * normal.pdf(zh) ** 2) \
        + f * (1 - f) / (noise * normal.pdf(zf) ** 2)
    half = Z95 * math.sqrt(variance)
    return Detection(d, c, (d - half, d + half), (c - half / 2, c + half / 2), h, f)
