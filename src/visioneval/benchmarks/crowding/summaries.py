"""Crowding's figures from its curves together: each flanked curve's critical spacing, given
only where the target alone was legible at that size (a model that cannot read the C alone
has no crowding to measure); the target alone's proportion correct per size; and how the
critical spacing in px grows with the target's size between the two sizes, as the exponent
k of spacing ∝ diameter^k: 1, it grows with the target (fixed in target diameters); 0, it
stays the same in pixels whatever the size, as people's does at one eccentricity."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from visioneval.paradigms.fits import Fitted
from visioneval.paradigms.metrics import Curve, Point
from visioneval.paradigms.paradigm import Summary


def summaries(curves: Sequence[object], criterion: float, diameters: Mapping[str, float],
              control: str, width: int) -> list[Summary]:
    """The figures, in the order the report lists them (the first is the run's main
    number). `diameters`: each flanked condition's target in px; `control`: the target
    alone's condition; `width`: the image's, px."""
    fitted = {f.curve.condition: f for f in curves if isinstance(f, Fitted)}
    alone = fitted.get(control)
    out: list[Summary] = []
    measured: dict[float, Fitted] = {}
    for name, diameter in diameters.items():
        found = fitted.get(name)
        if found is None:
            continue
        legible = _point(alone.curve, diameter) if alone else None
        figure = critical_spacing(found.curve, diameter, legible, criterion, width)
        out.append(figure)
        if figure.value is not None:
            measured[diameter] = found
    if alone is not None:
        for diameter in sorted(diameters.values(), reverse=True):
            point = _point(alone.curve, diameter)
            if point is not None:
                out.append(Summary(
                    f"unflanked, {diameter:g} px target", "% correct", 100 * point.p,
                    (100 * point.ci95[0], 100 * point.ci95[1]),
                    note=f"{point.k}/{point.n} right with no flankers (chance 25%)"))
    if len(diameters) == 2 and any(name in fitted for name in diameters):
        out.append(size_exponent(measured, sorted(diameters.values())))
    return out


def _point(curve: Curve, diameter: float) -> Point | None:
    return next((p for p in curve.points if math.isclose(p.level, diameter)), None)


def critical_spacing(curve: Curve, diameter: float, legible: Point | None,
                     criterion: float, width: int) -> Summary:
    """The curve's threshold as the critical spacing, unless the target alone was read
    clearly below the criterion (its whole 95% interval under it)."""
    name, unit = f"critical spacing, {diameter:g} px target", curve.unit
    if legible is not None and legible.ci95[1] < criterion:
        return Summary(name, unit, None, reason=(
            f"the target alone was read {legible.k}/{legible.n} right, below the "
            f"{100 * criterion:g}% criterion: crowding cannot be measured at this size"))
    if curve.threshold is None:
        return Summary(name, unit, None, reason=curve.reason or curve.status)
    px = curve.threshold * diameter
    note = (f"{px:.3g} px centre to centre, {100 * px / width:.3g}% of the image's width "
            f"({px - diameter:.3g} px between the rings' edges)")
    if legible is None:
        note += "; the target alone was not run: its legibility is unchecked"
    elif legible.p < criterion:
        note += (f"; the target alone was read only {legible.k}/{legible.n} right: the "
                 "figure may reflect legibility as much as crowding")
    return Summary(name, unit, curve.threshold, curve.threshold_ci95, note=note)


def size_exponent(measured: Mapping[float, Fitted], sizes: Sequence[float]) -> Summary:
    """k in spacing_px ∝ diameter^k between the two sizes, with the 95% interval of the
    paired bootstrap draws of the two independent curves. A draw beyond a curve's tested
    spacings counts as unbounded on that side, so the interval never extrapolates."""
    name = "size exponent of critical spacing"
    small, large = sizes
    missing = [f"{d:g} px" for d in sizes if d not in measured]
    if missing:
        return Summary(name, "", None, reason=(
            "needs both sizes' critical spacings; none at " + " and ".join(missing)))
    step = math.log(large / small)
    a, b = measured[large], measured[small]
    assert a.curve.threshold is not None and b.curve.threshold is not None
    value = 1 + math.log(a.curve.threshold / b.curve.threshold) / step
    note = ("critical spacing in px grows as the target's diameter to this power: 1, with "
            "the target (fixed in target diameters); 0, not at all (fixed in px, as "
            "people's at one eccentricity)")
    pairs = min(len(a.draws), len(b.draws))
    if pairs == 0:
        return Summary(name, "", value, None, note=note)
    la, lb = _log_draws(a), _log_draws(b)
    with np.errstate(invalid="ignore"):
        draws = 1 + (la[:pairs] - lb[:pairs]) / step
    undefined = np.isnan(draws)  # both beyond the tested spacings on the same side
    low = float(np.quantile(np.where(undefined, -np.inf, draws), 0.025,
                            method="inverted_cdf"))
    high = float(np.quantile(np.where(undefined, np.inf, draws), 0.975,
                             method="inverted_cdf"))
    return Summary(name, "", value, (None if math.isinf(low) else low,
                                     None if math.isinf(high) else high), note=note)


def _log_draws(found: Fitted) -> np.ndarray:
    """log threshold per draw; ±inf beyond the lowest or highest tested spacing."""
    draws = np.asarray(found.draws, dtype=np.float64)
    levels = [p.level for p in found.curve.points]
    with np.errstate(divide="ignore"):
        logs = np.log(np.where(draws > 0, draws, 0.0))
    return np.where(draws < min(levels), -np.inf, np.where(draws > max(levels), np.inf, logs))
