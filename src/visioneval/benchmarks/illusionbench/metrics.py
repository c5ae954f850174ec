"""metrics.json for IllusionBench: `{"<protocol>": {"<subset>": {...}}}`, all fractions.

Per protocol and subset: `shape_recall` = share of shape-task samples scored correct (under
`original`: bucket == shape under the shape prompt); `scene_recall` = share of scene-task
samples correct (`original`: bucket == texture under the scene prompt), the reading of the
original's pickled per-class buckets that the paper's figure reports. Each task block has n,
n_errors, the recall, and the same per difficulty and per class (the task's own label: shape
class for the shape task, scene for the scene task). `original` adds the shape/texture/rest
distribution under both prompts (the shape-versus-scene bias view) and `quirks`, the other
variant of the rule on the same responses.

Failed requests count in n_errors and are left out of n and of every score; a recall with
n = 0 is absent and `unavailable` says why (never 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from visioneval.benchmarks.illusionbench.prompts import offered
from visioneval.benchmarks.illusionbench.protocols import lmms_normalize
from visioneval.benchmarks.illusionbench.spec import DIFFICULTIES, FAMILY, ORIGINAL_FIXED
from visioneval.records import Record

BUCKETS = ("shape", "texture", "rest")


def tally(records: Sequence[Record], rule: str) -> dict[str, Any]:
    """n, n_errors and the recall of `rule` over some records (one task)."""
    scored = [r for r in records if r.ok]
    n_errors = len(records) - len(scored)
    block: dict[str, Any] = {"n": len(scored), "n_errors": n_errors}
    if not scored:
        block["unavailable"] = f"no scored samples ({n_errors} failed requests)"
    else:
        block["recall"] = sum(r.scores[rule]["correct"] for r in scored) / len(scored)
    return block


def task_block(records: Sequence[Record], rule: str, task: str) -> dict[str, Any]:
    """The task's recall overall, per difficulty and per class."""
    by_difficulty = {d: [r for r in records if r.metadata["difficulty"] == d]
                     for d in DIFFICULTIES}
    by_class: dict[str, list[Record]] = {}
    for record in records:
        by_class.setdefault(record.target[task], []).append(record)
    return tally(records, rule) | {
        "per_difficulty": {d: tally(rs, rule) for d, rs in by_difficulty.items() if rs},
        "per_class": {c: tally(by_class[c], rule) for c in sorted(by_class)},
    }


def distribution(records: Sequence[Record], rule: str) -> dict[str, Any]:
    """Shares of the shape/texture/rest buckets among scored records."""
    scored = [r for r in records if r.ok]
    if not scored:
        return {"n": 0, "unavailable": "no scored samples"}
    counts = {b: sum(1 for r in scored if r.parsed[rule] == b) for b in BUCKETS}
    return {"n": len(scored)} | {b: c / len(scored) for b, c in counts.items()}


def not_offered(records: Iterable[Record], family: str, subset: str,
                tasks: Sequence[str]) -> dict[str, list[str]]:
    """Labels of the data that the family's prompt does not list (compared normalised:
    case, `_`, `-` and punctuation ignored), e.g. `stationary` when `Stationery` is offered."""
    records = list(records)
    out = {}
    for task in tasks:
        options = {lmms_normalize(o) for o in offered(family, subset, task)}
        labels = {r.target[task] for r in records}
        out[task] = sorted(label for label in labels if lmms_normalize(label) not in options)
    return out


def subset_block(records: Sequence[Record], rule: str, subset: str,
                 tasks: Sequence[str]) -> dict[str, Any]:
    """One protocol's metrics for one subset (records of the protocol's prompt family)."""
    by_task = {t: [r for r in records if r.metadata["task"] == t] for t in tasks}
    tasks_out = {t: task_block(rs, rule, t) for t, rs in by_task.items()}
    block: dict[str, Any] = {"rule": rule}
    block |= {f"{t}_recall": b["recall"] for t, b in tasks_out.items() if "recall" in b}
    block |= tasks_out
    block["labels_not_offered"] = not_offered(records, FAMILY[rule], subset, tasks)
    if rule in ("original", ORIGINAL_FIXED):
        block["distribution"] = {f"{t}_prompt": distribution(rs, rule)
                                 for t, rs in by_task.items()}
        block["quirks"] = quirk_block(by_task, rule)
    return block


def quirk_block(by_task: dict[str, list[Record]], rule: str) -> dict[str, Any]:
    """The other variant of the original rule on the same responses, and the difference."""
    other = "original" if rule == ORIGINAL_FIXED else ORIGINAL_FIXED
    block: dict[str, Any] = {"rule": other}
    for task, recs in by_task.items():
        mine, theirs = tally(recs, rule), tally(recs, other)
        if "recall" in theirs:
            block[f"{task}_recall"] = theirs["recall"]
            block[f"{task}_delta"] = theirs["recall"] - mine["recall"]
        block[f"{task}_changed"] = sum(1 for r in recs
                                       if r.ok and r.parsed[rule] != r.parsed[other])
    return block


def summarize(records: Iterable[Record], protocols: Sequence[str], subsets: Sequence[str],
              tasks: Sequence[str], fix_quirks: bool) -> dict[str, Any]:
    """metrics.json from the records alone (the newest record per sample)."""
    by_family: dict[tuple[str, str], list[Record]] = {}
    for record in records:
        by_family.setdefault((record.group, record.metadata["family"]), []).append(record)
    out: dict[str, Any] = {}
    for protocol in protocols:
        rule = (ORIGINAL_FIXED if fix_quirks else "original") if protocol == "original" \
            else protocol
        out[protocol] = {s: subset_block(by_family.get((s, FAMILY[rule]), []), rule, s, tasks)
                         for s in subsets}
    return out
