"""A BLINK run's main number: the first protocol's (the paper's when it ran) unweighted mean
of the task accuracies, against the published labels."""

from __future__ import annotations

from typing import Any

from visioneval.core.headline import Headline, from_block


def headline(metrics: dict[str, Any]) -> Headline:
    protocols = [p for p, b in (metrics.get("protocols") or {}).items() if isinstance(b, dict)]
    if not protocols:
        return Headline("accuracy", unavailable="no protocol in metrics.json")
    protocol = protocols[0]
    blocks = metrics["protocols"][protocol]
    label_set = "original" if isinstance(blocks.get("original"), dict) else "corrected"
    suffix = ", corrected labels" if label_set == "corrected" else ""
    return from_block(f"mean of task accuracies ({protocol}{suffix})", blocks.get(label_set),
                      "macro")
