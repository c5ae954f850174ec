"""A paradigm run's main number: its first summary when the paradigm makes one (an
illusion's strength against its control, the agreement of its conditions' order with
people's), else its first curve's threshold (forced choice), JND (comparison) or midmean
log2 error (estimate) with its interval, in the paradigm's unit; "not reached" says why."""

from __future__ import annotations

from typing import Any

from visioneval.core.headline import Headline, interval_of


def headline(metrics: dict[str, Any]) -> Headline:
    summaries = [s for s in metrics.get("summaries") or () if isinstance(s, dict)]
    curves = [c for c in metrics.get("curves") or () if isinstance(c, dict)]
    more = len(curves) - 1 + max(len(summaries) - 1, 0)
    tail = f"; +{more} more" if more > 0 else ""
    if summaries:
        s = summaries[0]
        label, value, unit = f"{s.get('name')}{tail}", s.get("value"), str(s.get("unit", ""))
        if not isinstance(value, int | float):
            return Headline(label, percent=False, unit=unit,
                            unavailable=str(s.get("reason") or "not computed"))
        interval = interval_of(s.get("ci95"))
        return Headline(label, float(value), interval, metrics.get("n"), percent=False,
                        unit=unit, interval_unavailable=None if interval else "not computed")
    if not curves:
        return Headline("threshold", percent=False, unavailable="no curve in metrics.json")
    c = curves[0]
    kind = metrics.get("kind")
    figure = {"comparison": "jnd", "estimate": "error"}.get(str(kind), "threshold")
    name = {"jnd": "JND", "error": "log2 error"}.get(figure, figure)
    label = f"{c.get('condition')} {name}{tail}"
    value = c.get(figure)
    unit = "" if figure == "error" else str(c.get("unit", ""))
    if not isinstance(value, int | float):
        return Headline(label, n=c.get("n"), percent=False, unit=unit,
                        unavailable=f"{c.get('status', 'not reached')}: "
                                    f"{c.get('reason') or 'no fit'}")
    interval = interval_of(c.get(f"{figure}_ci95"))
    return Headline(label, float(value), interval, c.get("n"), percent=False, unit=unit,
                    interval_unavailable=None if interval else "not computed")
