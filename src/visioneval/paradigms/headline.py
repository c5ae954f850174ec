"""A paradigm run's main number: its first summary meant as one when the paradigm makes it
(an illusion's strength against its control, the agreement of its conditions' order with
people's), else its first curve's threshold (forced choice), JND (comparison) or midmean
log2 error (estimate) with its interval, in the paradigm's unit, or the figure of the
paradigm's own model (a Weber fraction); "not reached" says why."""

from __future__ import annotations

from typing import Any

from visioneval.core.headline import Headline, interval_of


def headline(metrics: dict[str, Any]) -> Headline:
    every = [s for s in metrics.get("summaries") or () if isinstance(s, dict)]
    summaries = [s for s in every if s.get("headline", True)]
    curves = [c for c in metrics.get("curves") or ()
              if isinstance(c, dict) and c.get("status") != "control"]  # a control: no fit
    more = len(curves) - 1 + (max(len(every) - 1, 0) if summaries else len(every))
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
    own = c.get("own_figure")
    if isinstance(own, dict):
        label, unit = f"{c.get('condition')} {own.get('name')}{tail}", str(own.get("unit", ""))
        value = own.get("value")
        if not isinstance(value, int | float):
            return Headline(label, n=c.get("n"), percent=False, unit=unit,
                            unavailable=f"{c.get('status', 'not reached')}: "
                                        f"{c.get('reason') or 'no fit'}")
        interval = interval_of(own.get("ci95"))
        return Headline(label, float(value), interval, c.get("n"), percent=False, unit=unit,
                        interval_unavailable=None if interval else "not computed")
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
