"""metrics.json of the generic image-question benchmark, recomputed from records alone:
`{"scorer", "overall": {...}, "groups": {"<group>": {...}}}`, each block with n (scored
samples), n_errors (failed requests, left out of every score), n_unparsed (answers nothing
could be read from: wrong for accuracy, counted here), n_ambiguous (of those, answers
naming two options) and accuracy; the set scorer adds SalBench's exact match, macro F1 and
sample F1 (`salbench.metrics.summarize_parser`, over the labels of the block's targets)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from visioneval.benchmarks.salbench.metrics import summarize_parser
from visioneval.benchmarks.vqa.scorers import labels
from visioneval.records import Record


def block(records: Sequence[Record], scorer: str) -> dict[str, Any]:
    scored = [r for r in records if r.ok]
    n_errors = len(records) - len(scored)
    scores = [r.scores.get(scorer, {}) for r in scored]
    out: dict[str, Any] = {
        "n": len(scored), "n_errors": n_errors,
        "n_unparsed": sum(int(s.get("unparsed", 0)) for s in scores),
        "n_ambiguous": sum(int(s.get("ambiguous", 0)) for s in scores),
    }
    if not scored:
        out["unavailable"] = f"no scored samples ({n_errors} failed requests)"
        return out
    out["accuracy"] = sum(s.get("correct", 0.0) for s in scores) / len(scored)
    if scorer == "set":
        pairs = [(set(r.parsed.get(scorer) or []), labels(r.target)) for r in scored]
        classes = sorted(set().union(*(gold for _, gold in pairs)))
        found = summarize_parser(pairs, classes, n_errors, scores)
        out |= {k: found[k] for k in ("exact_match", "macro_f1", "sample_f1", "per_class")}
    return out


def summarize(records: Sequence[Record], scorer: str) -> dict[str, Any]:
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(record.group, []).append(record)
    return {"scorer": scorer, "overall": block(records, scorer),
            "groups": {g: block(rs, scorer) for g, rs in sorted(groups.items())}}
