"""An MMVP run's main number: the pair accuracy of its first protocol (the paper's when it
ran) against that protocol's own labels, n counting pairs."""

from __future__ import annotations

from typing import Any

from visioneval.core.headline import Headline, from_block


def headline(metrics: dict[str, Any]) -> Headline:
    protocols = [p for p, b in (metrics.get("protocols") or {}).items() if isinstance(b, dict)]
    if not protocols:
        return Headline("pair accuracy", unavailable="no protocol in metrics.json")
    protocol = protocols[0]
    blocks = metrics["protocols"][protocol]
    label_set = "original" if isinstance(blocks.get("original"), dict) else "corrected"
    block = blocks.get(label_set)
    label = f"pair accuracy ({protocol}" + (", corrected labels)" if label_set == "corrected"
                                             else ")")
    found = from_block(label, block, "pair_accuracy")
    pairs = block.get("n_pairs") if isinstance(block, dict) else None
    return Headline(found.label, found.value, found.interval,
                    pairs if isinstance(pairs, int) else None, unavailable=found.unavailable,
                    interval_unavailable=found.interval_unavailable)
