"""The side-by-side view: each protocol's recalls per subset, their distance from the
original protocol and their 95% intervals, as `protocols.csv` and in the terminal (the main
table a run ends with, and every table `visioneval show` prints)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from visioneval.benchmarks.illusionbench.spec import FAMILY, ORIGINAL_FIXED
from visioneval.core.printed import print_table
from visioneval.fmt import interval, pct
from visioneval.io import csvcells
from visioneval.stats.bootstrap import few_clusters_note
from visioneval.terminal import line

CSV_HEADER = ["protocol", "rule", "subset", "shape_recall_pct", "scene_recall_pct", "shape_n",
              "scene_n", "n_errors", "shape_delta_pct", "scene_delta_pct",
              # appended, so readers of the older columns keep them: the recall's interval
              "shape_ci95_low_pct", "shape_ci95_high_pct", "scene_ci95_low_pct",
              "scene_ci95_high_pct"]
RULE_NAMES = {"original": "as published", ORIGINAL_FIXED: "quirks fixed",
              "lmms-strict": "lmms-strict", "lmms-recall": "lmms-recall"}
TASKS = ("shape", "scene")


def rows(metrics: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Per subset, one row per protocol, and after `original` its other variant (what the
    quirks change); deltas are against `original` on the same subset."""
    subsets = list(next(iter(metrics.values()), {}))
    for subset in subsets:
        base = metrics.get("original", {}).get(subset)
        for protocol, blocks in metrics.items():
            block = blocks[subset]
            label = protocol if block["rule"] != ORIGINAL_FIXED else "original (fixed)"
            yield _row(protocol, label, block["rule"], subset, block, block,
                       None if protocol == "original" else base)
            if "quirks" in block:
                other = block["quirks"]["rule"]
                yield _row(protocol, f"  {RULE_NAMES[other]}", other, subset, block["quirks"],
                           block, base)


def _row(protocol: str, label: str, rule: str, subset: str, block: dict[str, Any],
         counts: dict[str, Any], base: dict[str, Any] | None) -> dict[str, Any]:
    """A table row; `counts` is the block holding n and n_errors, `base` the reference.
    The interval is the task block's `recall_ci95` (a `quirks` block keeps it as
    `<task>_recall_ci95`)."""
    row: dict[str, Any] = {"protocol": protocol, "label": label, "rule": RULE_NAMES[rule],
                           "subset": subset, "n_errors": 0}
    for task in TASKS:
        value, reference = block.get(f"{task}_recall"), (base or {}).get(f"{task}_recall")
        row[f"{task}_recall"] = value
        row[f"{task}_ci95"] = (block.get(task) or {}).get("recall_ci95") or \
            block.get(f"{task}_recall_ci95")
        row[f"{task}_delta"] = None if value is None or reference is None else value - reference
        row[f"{task}_n"] = counts.get(task, {}).get("n")
        row["n_errors"] += counts.get(task, {}).get("n_errors", 0)
    return row


def _n(value: int | None) -> str:
    return "" if value is None else str(value)


def to_csv(metrics: dict[str, Any]) -> str:
    buf = io.StringIO()
    out = csvcells.writer(buf, lineterminator="\n")
    out.writerow(CSV_HEADER)
    for r in rows(metrics):
        out.writerow([r["protocol"], r["rule"], r["subset"], pct(r["shape_recall"]),
                      pct(r["scene_recall"]), _n(r["shape_n"]), _n(r["scene_n"]), r["n_errors"],
                      pct(r["shape_delta"], signed=True), pct(r["scene_delta"], signed=True),
                      *_bounds(r["shape_ci95"]), *_bounds(r["scene_ci95"])])
    return buf.getvalue()


def _bounds(found: list[float] | None) -> tuple[str, str]:
    """An interval's low and high in percent; two empty cells when there is none."""
    return ("", "") if not found else (pct(found[0]), pct(found[1]))


def write(metrics: dict[str, Any], directory: Path) -> list[Path]:
    path = directory / "protocols.csv"
    path.write_text(to_csv(metrics))
    return [path]


LEGEND = {
    "original": "original:    the paper's prompts and rule (substring; the shape, if named, "
                "wins)\n  and below it the same rule with its spelling quirks corrected, or "
                "as published",
    "lmms-strict": "lmms-strict: lmms-eval's 'Answer: <choice>' prompts, exact match of the "
                   "answer",
    "lmms-recall": "lmms-recall: the paper's prompts, label as a substring, no precedence",
}


def with_interval(value: float | None, span: list[float] | None) -> str:
    """"12.5 [0.0, 25.0]": a recall in percent with its 95% interval."""
    if value is None:
        return "-"
    return f"{pct(value)} [{interval(span, joiner=', ')}]" if span else pct(value)


def show_main(metrics: dict[str, Any], model: str, console: Console) -> None:
    """The table a run ends with: per subset and protocol, each task's recall with its 95%
    interval and its distance from the original protocol (within 100 columns)."""
    note = "[95%]: bootstrap over samples, 1000 seeded resamples."
    if "original" in metrics:
        note = "Δ: protocol minus original, same model and images (points). " + note
    found, previous = [], None
    for r in rows(metrics):
        found.append([r["subset"] if r["subset"] != previous else "", r["label"],
                      with_interval(r["shape_recall"], r["shape_ci95"]),
                      pct(r["shape_delta"], signed=True),
                      with_interval(r["scene_recall"], r["scene_ci95"]),
                      pct(r["scene_delta"], signed=True),
                      f"{_n(r['shape_n'])}/{_n(r['scene_n'])}", str(r["n_errors"])])
        previous = r["subset"]
    print_table(console, f"IllusionBench: {model}, recall (percent)",
                ["set", "protocol", "shape [95%]", "Δ", "scene [95%]", "Δ", "n", "errors"],
                found, note + " n: shape/scene answers.", numeric_from=2)


def show(metrics: dict[str, Any], model: str, console: Console) -> None:
    """Every IllusionBench table (`visioneval show`): the main table, both tasks pooled,
    what each protocol is, the bias view and the labels a prompt does not offer."""
    show_main(metrics, model, console)
    pooled = pooled_rows(metrics)
    if pooled:
        console.print()
        print_table(console, "Both tasks pooled, recall (percent)", POOLED_HEADER, pooled,
                    "interval: bootstrap-t over images, 1000 seeded resamples", numeric_from=2)
        for text in pooled_notes(metrics):
            line(console, text)
    console.print()
    line(console, "Protocols", style="bold")
    for protocol in metrics:
        for text in LEGEND[protocol].splitlines():
            line(console, text)
    if "original" in metrics:
        show_bias(metrics["original"], console)
    show_not_offered(metrics, console)


POOLED_HEADER = ["protocol", "set", "answers", "images", "recall", "95% interval"]
POOLED_NOTE = ("Both tasks pooled: the shape and the scene answers together. The two answers "
               "about one image are not independent, so the interval is a cluster bootstrap "
               "that draws images, each resample studentized by its own cluster-robust error "
               "(the bootstrap-t; 1000 seeded resamples; docs/intervals.md).")


def pooled_notes(metrics: dict[str, Any]) -> list[str]:
    """"ICON, original: only 12 images: the interval's 95% is measured from 20 on", per
    pooled block over fewer images than `stats.bootstrap.HOLDS_FROM`."""
    notes = []
    for protocol, blocks in metrics.items():
        for subset, block in blocks.items():
            pooled = block.get("pooled") or {}
            count = pooled.get("recall_ci95_n_clusters")
            note = few_clusters_note(count, str(pooled.get("recall_ci95_clusters", "image"))) \
                if isinstance(count, int) else None
            if note:
                notes.append(f"{subset}, {protocol}: {note}")
    return notes


def pooled_rows(metrics: dict[str, Any]) -> list[list[str]]:
    """Per protocol and subset, the recall over both tasks with its interval over images
    (percent); none when a run asked one task."""
    out = []
    for protocol, blocks in metrics.items():
        for subset, block in blocks.items():
            pooled = block.get("pooled")
            if not pooled or "recall" not in pooled:
                continue
            out.append([protocol, subset, str(pooled["n"]), _n(pooled.get("n_images")),
                        pct(pooled["recall"]), interval(pooled.get("recall_ci95"))])
    return out


def show_bias(original: dict[str, Any], console: Console) -> None:
    """Where the original rule puts the answers under each prompt (shape/texture/rest)."""
    found = [[subset, key.replace("_", " "), pct(dist["shape"]), pct(dist["texture"]),
              pct(dist["rest"]), str(dist["n"])]
             for subset, block in original.items()
             for key, dist in block.get("distribution", {}).items() if "unavailable" not in dist]
    if found:
        console.print()
        print_table(console, "Shape or scene? original rule's buckets (percent)",
                    ["set", "prompt", "shape", "texture", "rest", "n"], found,
                    "texture: names the scene; rest: neither", numeric_from=2)


def show_not_offered(metrics: dict[str, Any], console: Console) -> None:
    """Labels a prompt does not list: an answer in the offered spelling may score wrong."""
    seen: dict[str, list[str]] = {}
    for protocol, blocks in metrics.items():
        family = FAMILY[protocol]
        for subset, block in blocks.items():
            for task, labels in block.get("labels_not_offered", {}).items():
                for label in labels:
                    text = f"{subset} {task} label '{label}'"
                    seen.setdefault(text, [])
                    if family not in seen[text]:
                        seen[text].append(family)
    if seen:
        console.print()
    for text, families in seen.items():
        line(console, f"note: {text} is not among the {' and '.join(families)} prompt's "
                      "options; an answer in the offered spelling may score wrong "
                      "(docs/illusionbench.md, quirks)")
