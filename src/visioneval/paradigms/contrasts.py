"""A figure of one curve against another's, as paradigm-level summaries make them (an
illusion's PSE against its control's, a flanked threshold against an unflanked one): the
difference of the two fitted figures, with a 95% interval from the two curves' bootstrap
draws.

The two curves are fitted from different trials, so their bootstraps are independent and
the difference's distribution is the two distributions' convolution: every draw of one is
paired with every draw of the other (1000 x 1000 differences), and the interval is that
set's 2.5th and 97.5th percentiles. Draws are not paired by their index: every curve's
bootstrap starts from the run's one seed, so draws of the same index come from the same
random numbers and would move together, narrowing the interval. An end of the difference is
open (None) where an end it is made from is open (beyond the tested levels)."""

from __future__ import annotations

from visioneval.paradigms.fits import Fitted
from visioneval.paradigms.paradigm import Summary

Interval = tuple[float | None, float | None]


def figure_of(fitted: Fitted) -> tuple[float | None, Interval | None]:
    """The curve's fitted figure (a comparison's PSE, a forced choice's threshold) and its
    interval."""
    c = fitted.curve
    if c.kind == "comparison":
        return c.pse, c.pse_ci95
    return c.threshold, c.threshold_ci95


def difference(name: str, unit: str, minuend: Fitted | None, subtrahend: Fitted | None,
               note: str = "") -> Summary:
    """figure(minuend) − figure(subtrahend); absent with the reason when either curve is
    missing or has no figure."""
    for fitted, role in ((minuend, "first"), (subtrahend, "second")):
        if fitted is None:
            return Summary(name, unit, None, reason=f"the {role} curve was not run", note=note)
        if figure_of(fitted)[0] is None:
            return Summary(name, unit, None, note=note, reason=(
                f"{fitted.curve.condition} not reached: {fitted.curve.reason or 'no fit'}"))
    assert minuend is not None and subtrahend is not None
    (a, a_ci), (b, b_ci) = figure_of(minuend), figure_of(subtrahend)
    assert a is not None and b is not None
    value = a - b
    if not minuend.draws or not subtrahend.draws or a_ci is None or b_ci is None:
        return Summary(name, unit, value, None, note=note)
    low, high = _percentiles(minuend.draws, subtrahend.draws)
    return Summary(name, unit, value, (
        None if a_ci[0] is None or b_ci[1] is None else low,
        None if a_ci[1] is None or b_ci[0] is None else high), note=note)


def _percentiles(first: tuple[float, ...], second: tuple[float, ...]) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of every difference of a draw of `first` and one of
    `second`."""
    import numpy as np  # loaded with the fits

    every = np.subtract.outer(np.asarray(first), np.asarray(second)).ravel()
    low, high = np.quantile(every, [0.025, 0.975], method="inverted_cdf")
    return float(low), float(high)
