"""The controls that take the image away (`--variant blind`, `--variant blank`), read against
chance in MMVP's own terms: pair accuracy against 25% (two independent guesses between two
options) and per-question accuracy against 50%. visioneval's variant summary compares the
per-question outcome with chance; pair accuracy needs both questions of a pair, so it is
computed here from the run's records (a few numbers per question)."""

from __future__ import annotations

from typing import Any

from visioneval.benchmarks.mmvp.metrics import Tally
from visioneval.core.store import RunStore
from visioneval.core.variant_ids import as_original, family_of
from visioneval.core.view import ReadableRun
from visioneval.fmt import interval, pct
from visioneval.variants.kinds import VariantError, parse

CHANCE = {"pair_accuracy": 0.25, "accuracy": 0.5}
HEADER = ["variant", "protocol", "pairs [95%]", "vs 25%", "questions [95%]", "vs 50%", "pairs"]
NOTE = ("Without the image, both questions of a pair are the same text with opposite labels: a "
        "model that answers a text the same way every time gets one of the two right, so 50% "
        "of questions and 0% of pairs; 25% of pairs is what independent coin flips get. "
        "[95%]: bootstrap over pairs.")


def image_free(view: ReadableRun) -> list[str]:
    """The run's variants that leave nothing of the image."""
    out = []
    for info in view.info.variants or []:
        try:
            made = parse([info.name])
        except VariantError:
            continue
        if made and made[0].removes_image:
            out.append(info.name)
    return out


def tallies(view: ReadableRun, variants: list[str]) -> dict[tuple[str, str], Tally]:
    found: dict[tuple[str, str], Tally] = {}
    # The journal itself: a run's records as its tables read them leave the variants out.
    for record in RunStore(view.directory, view.info).iter_latest():
        family = family_of(record)
        if family not in variants:
            continue
        original = as_original(record)
        protocol = original.metadata.get("prompt")
        if not isinstance(protocol, str):
            continue
        verdict = record.scores.get(protocol, {}).get("correct") if record.ok else None
        found.setdefault((str(family), protocol), Tally()).add(original, verdict)
    return found


def against(block: dict[str, Any], key: str) -> str:
    """Above, below or within chance, by the 95% interval."""
    span = block.get(f"{key}_ci95")
    if block.get(key) is None or not span:
        return "-"
    if span[0] > CHANCE[key]:
        return "above"
    if span[1] < CHANCE[key]:
        return "below"
    return "within"


def rows(view: ReadableRun) -> list[list[str]]:
    variants = image_free(view)
    if not variants:
        return []
    out = []
    for (variant, protocol), tally in tallies(view, variants).items():
        b = tally.block()
        out.append([variant, protocol,
                    f"{pct(b.get('pair_accuracy'), missing='-')} "
                    f"[{interval(b.get('pair_accuracy_ci95'), joiner=', ')}]",
                    against(b, "pair_accuracy"),
                    f"{pct(b.get('accuracy'), missing='-')} "
                    f"[{interval(b.get('accuracy_ci95'), joiner=', ')}]",
                    against(b, "accuracy"), str(b.get("n_pairs", 0))])
    return out
