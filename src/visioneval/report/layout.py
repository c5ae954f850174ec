"""The report of a `visioneval layout` results file: per-variant summary, the distribution of
every headline metric (seed-era and the added non-saturating scores side by side), what was
skipped and why, and a link to the per-sample pictures when `--viz` drew them."""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt

from visioneval.engine.store import write_atomic
from visioneval.report import charts
from visioneval.report.page import ASSETS
from visioneval.report.sections import table

# Seed-era headline metrics, then the scores that do not saturate (docs/layout.md).
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
    cards = [("samples", len(samples)), ("pairs skipped", len(document.get("skipped", []))),
             ("samples with a metric error", errors),
             ("time", f"{document.get('seconds', 0):.1f} s")]
    html_cards = "".join(f'<div class="card"><b>{html.escape(str(v))}</b>'
                         f"<span>{html.escape(k)}</span></div>" for k, v in cards)
    blocks = [f'<section><h2>Run</h2><div class="cards">{html_cards}</div><p class="note">'
              f"{html.escape(document.get('base_dir', ''))} · model "
              f"{html.escape(str(document.get('model')))} · variants "
              f"{html.escape(', '.join(variants))}</p>{_viz_link(document, results)}</section>"]
    blocks.append(_summary(document, variants))
    blocks.append(f"<section><h2>Distributions</h2><p class=note>One panel per metric, one "
                  f"colour per variant; the seed-era metrics first, then the scores that "
                  f"cannot reach 1.0 without overlap (IoU ≥ 0.5 F1, block match, ...).</p>"
                  f"{_distributions(samples, variants)}</section>")
    blocks.append(_problems(document, samples))
    title = f"layout: {document.get('model')} ({', '.join(variants)})"
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>'
            f"{html.escape(title)} · visioneval</title><style>"
            f"{(ASSETS / 'report.css').read_text()}</style></head><body><header><h1>"
            f"{html.escape(title)}</h1><div class=sub>{html.escape(str(results))}</div>"
            f"</header><main>{''.join(blocks)}</main></body></html>\n")


def _viz_link(document: dict[str, Any], results: Path) -> str:
    pictures = [s.get("viz") for s in document.get("samples", []) if s.get("viz")]
    index = results.with_name(results.stem + "-viz") / "index.html"
    if not pictures or not index.exists():
        return "<p class=note>No pictures: run `visioneval layout ... --viz` to draw them.</p>"
    href = os.path.relpath(index, results.parent)
    return (f'<p>Per-sample pictures and a sortable table: <a href="{html.escape(href)}">'
            f"{html.escape(href)}</a></p>")


def _summary(document: dict[str, Any], variants: list[str]) -> str:
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
    return f"<section><h2>Summary</h2>{table(header, rows)}</section>"


def _distributions(samples: list[dict[str, Any]], variants: list[str]) -> str:
    keys = [k for k in DISTRIBUTED if any(isinstance(s.get(k), int | float) for s in samples)]
    if not keys:
        return "<p class=note>No metric values.</p>"
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
    return charts.svg(fig)


def _problems(document: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    rows = [[s.get("gid") or s.get("id", "?"), s.get("reason", "")]
            for s in document.get("skipped", [])]
    rows += [[f"{s['variant']}/{s['id']}", f"{k}: {v}"] for s in samples
             for k, v in s.items() if k.endswith("_error")]
    absent: dict[str, int] = {}
    for sample in samples:
        for key, reason in (sample.get("absent") or {}).items():
            absent[f"{key}: {reason}"] = absent.get(f"{key}: {reason}", 0) + 1
    parts = []
    if rows:
        parts.append(table(["pair or sample", "problem"], rows, numeric_from=99))
    if absent:
        parts.append(table(["absent metric and reason", "samples"],
                           [[k, n] for k, n in sorted(absent.items())]))
    body = "".join(parts) or "<p class=note>Every pair was scored.</p>"
    return f"<section><h2>Skipped, errors and absent values</h2>{body}</section>"
