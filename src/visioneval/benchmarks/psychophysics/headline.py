"""A psychophysics run's main number: its first psychometric threshold (the thresholds
table's first row: detection, one feature at one set size) with its parametric-bootstrap
interval, in the feature's unit; a run without detection trials shows its first d′. A
threshold "not reached" is no number, and says why. The label says how many more fits the
report has, and φ when the answers vary more than binomial between levels."""

from __future__ import annotations

from typing import Any

from visioneval.benchmarks.psychophysics.tables import overdispersed
from visioneval.core.headline import Headline, interval_of


def headline(metrics: dict[str, Any]) -> Headline:
    thresholds = [t for t in metrics.get("thresholds") or () if isinstance(t, dict)]
    if thresholds:
        return _threshold(thresholds[0], len(thresholds) - 1)
    fits = [d for d in metrics.get("detection_theory") or () if isinstance(d, dict)]
    if fits:
        return _dprime(fits[0], len(fits) - 1)
    why = metrics.get("thresholds_unavailable") or metrics.get("detection_theory_unavailable")
    return Headline("threshold", percent=False,
                    unavailable=str(why or "no threshold or d′ in metrics.json"))


def _more(n: int, what: str) -> str:
    return f"; +{n} {what}" if n else ""


def _threshold(fit: dict[str, Any], more: int) -> Headline:
    label = (f"{fit.get('feature')} threshold, set size {fit.get('set_size')}"
             f"{'; ' + overdispersed(fit) if overdispersed(fit) else ''}"
             f"{_more(more, 'fits')}")
    n = fit.get("n_trials")
    value = fit.get("threshold")
    unit = str(fit.get("unit", ""))
    if not isinstance(value, int | float):
        return Headline(label, n=n, percent=False, unit=unit,
                        unavailable=f"{fit.get('status', 'not reached')}: "
                                    f"{fit.get('reason') or 'no threshold fitted'}")
    interval = interval_of(fit.get("threshold_ci95"))
    return Headline(label, float(value), interval, n, percent=False, unit=unit,
                    interval_unavailable=None if interval else "not computed")


def _dprime(fit: dict[str, Any], more: int) -> Headline:
    label = (f"d′ {fit.get('experiment')} {fit.get('feature')} at {fit.get('level')} "
             f"{fit.get('unit', '')}{_more(more, 'conditions')}")
    n = (fit.get("n_signal") or 0) + (fit.get("n_noise") or 0)
    value = fit.get("dprime")
    if not isinstance(value, int | float):
        return Headline(label, n=n, percent=False,
                        unavailable=str(fit.get("reason") or "d′ not computed"))
    interval = interval_of(fit.get("dprime_ci95"))
    return Headline(label, float(value), interval, n, percent=False,
                    interval_unavailable=None if interval else "not computed")
