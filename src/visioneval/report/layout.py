"""The report of a `visioneval layout` results file: per-variant summary and the distribution
of every headline metric (CANVAS's and the added non-saturating scores side by side) first,
then the run's counts with a link to the per-sample pictures when `--viz` drew them, then
what was skipped and why."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from visioneval.core.blocks import Block, Cards, Charts, Link, Note, Section, Table
from visioneval.core.store import write_atomic
from visioneval.report import charts, templating

# CANVAS's headline metrics, then the scores that do not saturate (docs/layout.md).
DISTRIBUTED = ("canvas_fill", "pixel_fidelity", "semantic_match", "element_count_ratio",
               "mean_iou", "layout_overlap", "alignment_f1", "tool_efficiency",
               "visual_completeness", "struct_completeness", "iou50_f1", "block_match",
               "position_similarity", "color_similarity")


def is_layout_results(path: Path) -> bool:
    if not path.is_file() or path.suffix != ".json":
        return False
    try:
        return json.loads(path.read_text()).get("tool") == "visioneval layout"
    except (ValueError, OSError):
        return False


def write_layout_report(results: Path) -> Path:
    document = json.loads(results.read_text())
    path = results.with_name(results.stem + "-report.html")
    write_atomic(path, render(document, results).encode("utf-8"))  # never half a page
    return path


def render(document: dict[str, Any], results: Path) -> str:
    samples = document.get("samples", [])
    variants = document.get("variants") or sorted({s["variant"] for s in samples})
    errors = sum(1 for s in samples if any(k.endswith("_error") for k in s))
    cards = Cards([("samples", len(samples)),
                   ("pairs skipped", len(document.get("skipped", []))),
                   ("samples with a metric error", errors),
                   ("time", f"{document.get('seconds', 0):.1f} s")])
    run = Section("Run", [cards, Note(f"{document.get('base_dir', '')} · model "
                                      f"{document.get('model')} · variants "
                                      f"{', '.join(variants)}")])
    distributions = Section("Distributions", [
        Note("One panel per metric, one colour per variant; CANVAS's metrics first, then "
             "the scores that cannot reach 1.0 without overlap (IoU ≥ 0.5 F1, block match, "
             "...)."), _distributions(samples, variants)])
    title = f"layout: {document.get('model')} ({', '.join(variants)})"
    # The results lead: the summary table and the distributions, then the run's counts.
    summary = _summary(document, variants)
    summary.blocks.append(_viz_link(document, results))
    return templating.render("sections.html", title=title, subtitle=str(results),
                             sections=[summary, distributions, run,
                                       _problems(document, samples)])


def _viz_link(document: dict[str, Any], results: Path) -> Block:
    pictures = [s.get("viz") for s in document.get("samples", []) if s.get("viz")]
    index = results.with_name(results.stem + "-viz") / "index.html"
    if not pictures or not index.exists():
        return Note("No pictures: run `visioneval layout ... --viz` to draw them.")
    href = os.path.relpath(index, results.parent)
    return Link(href, href, "Per-sample pictures and a sortable table: ")


def _summary(document: dict[str, Any], variants: list[str]) -> Section:
    summary = document.get("summary", {})
    keys = [k for k in DISTRIBUTED if any(k in summary.get(v, {}) for v in variants)]
    rows = []
    for key in keys:
        row = [key]
        for variant in variants:
            stats = summary.get(variant, {}).get(key)
            row += ["-", "-", "0"] if not stats else \
                [f"{stats['mean']:.4f}", f"{stats['median']:.4f}", str(stats["count"])]
        rows.append(row)
    header = ["metric", *[f"{v} {s}" for v in variants for s in ("mean", "median", "n")]]
    return Section("Summary", [Table(header, rows)])


def _distributions(samples: list[dict[str, Any]], variants: list[str]) -> Block:
    keys = [k for k in DISTRIBUTED if any(isinstance(s.get(k), int | float) for s in samples)]
    if not keys:
        return Note("No metric values.")
    import matplotlib.pyplot as plt  # here: `visioneval report RUN` imports this module

    from visioneval.report import mplsvg

    cols = 4
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 2.2 * rows), squeeze=False)
    for ax, key in zip(axes.flat, keys, strict=False):
        for i, variant in enumerate(variants):
            values = [s[key] for s in samples if s.get("variant") == variant
                      and isinstance(s.get(key), int | float)]
            if values:
                ax.hist(values, bins=20, range=(0, 1) if max(values) <= 1 else None,
                        alpha=0.7, label=f"{variant} (n={len(values)})",
                        color=charts.PALETTE[i % len(charts.PALETTE)])
        ax.set_title(key, fontsize=9)
        ax.set_ylabel("samples", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return Charts([mplsvg.svg(fig)])


def _problems(document: dict[str, Any], samples: list[dict[str, Any]]) -> Section:
    rows = [[s.get("gid") or s.get("id", "?"), s.get("reason", "")]
            for s in document.get("skipped", [])]
    rows += [[f"{s['variant']}/{s['id']}", f"{k}: {v}"] for s in samples
             for k, v in s.items() if k.endswith("_error")]
    absent: dict[str, int] = {}
    for sample in samples:
        for key, reason in (sample.get("absent") or {}).items():
            absent[f"{key}: {reason}"] = absent.get(f"{key}: {reason}", 0) + 1
    blocks: list[Block] = []
    if rows:
        blocks.append(Table(["pair or sample", "problem"], rows, numeric_from=99))
    if absent:
        blocks.append(Table(["absent metric and reason", "samples"],
                            [[k, n] for k, n in sorted(absent.items())]))
    return Section("Skipped, errors and absent values",
                   blocks or [Note("Every pair was scored.")])
