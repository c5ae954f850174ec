"""POPE's report sections as data (`core/blocks.py`): the paper's table with a chart of F1
and yes ratio per setting, the harnesses' reading of the same questions, why the protocols
differ, RePOPE's corrected labels, and per source when the data holds several."""

from __future__ import annotations

from typing import Any

from visioneval.benchmarks.pope.spec import LMMS, PAPER, SETTINGS, VLMEVALKIT
from visioneval.benchmarks.pope.tables import (
    INTERVALS,
    LMMS_YES,
    NAMES,
    UNREAD,
    label_sets,
    present,
    scopes,
    with_interval,
)
from visioneval.core.blocks import Charts, Note, Section, Table
from visioneval.core.figures import BarSeries, GroupedBars, percent_interval
from visioneval.fmt import pct
from visioneval.harness import differences
from visioneval.harness.differences import DifferenceSummary


def _scaled(value: float | None) -> float | None:
    return None if value is None else 100 * value


def paper_section(metrics: dict[str, Any], labels: str) -> Section:
    block = metrics[PAPER][labels]
    rows = [[s, str(b["n"]), str(b["n_errors"]), with_interval(b, "accuracy"),
             with_interval(b, "precision"), with_interval(b, "recall"), with_interval(b, "f1"),
             with_interval(b, "yes_ratio")] for s, b in scopes(PAPER, block)]
    settings = [s for s in SETTINGS if s in block["settings"]]
    chart = GroupedBars("F1 and yes ratio per setting (the paper's reading)", settings, [
        BarSeries(name, [_scaled(block["settings"][s].get(key)) for s in settings],
                  [percent_interval(block["settings"][s].get(f"{key}_ci95"))
                   for s in settings])
        for key, name in (("f1", "F1"), ("yes_ratio", "yes ratio"))], "percent")
    blocks: list[Any] = [Table(["setting", "n", "errors", "accuracy [95%]", "precision [95%]",
                                "recall [95%]", "F1 [95%]", "yes ratio [95%]"], rows, 1),
                         Charts([chart])]
    mean = block.get("mean_f1") or {}
    if "f1" in mean:
        blocks.append(Note(f"Mean F1 of the three settings: {with_interval(mean, 'f1')}. "
                           "This is LLaVA-1.5's one POPE number (LLaVA's model zoo), not a "
                           "number the POPE paper reports: the paper gives each setting apart."))
    blocks.append(Note("The paper's protocol (AoiDragon/POPE evaluate.py): the question as "
                       "it is; the answer's text before its first \".\", commas deleted, "
                       "split on spaces; \"no\" if a word is \"No\", \"not\" or \"no\", else "
                       "\"yes\". Yes ratio: answers read \"yes\" over all. " + INTERVALS))
    which = "" if labels == "original" else " (RePOPE's corrected labels)"
    return Section(f"The paper's protocol, each setting apart{which}", blocks)


def harness_section(metrics: dict[str, Any], labels: str) -> Section | None:
    rows = []
    for protocol in (LMMS, VLMEVALKIT):
        if protocol not in metrics:
            continue
        for scope, b in scopes(protocol, metrics[protocol][labels]):
            yes = pct(b.get("lmms_yes_ratio"), missing="-") + "*" if protocol == LMMS else "-"
            rows.append([NAMES[protocol], scope, str(b["n"]), with_interval(b, "accuracy"),
                         with_interval(b, "precision"), with_interval(b, "recall"),
                         with_interval(b, "f1"), yes, str(b.get("unparsed", 0))])
    if not rows:
        return None
    notes = [Note(UNREAD)] + ([Note(LMMS_YES)] if LMMS in metrics else [])
    return Section("The same questions under each harness's prompt and rules", [
        Table(["harness", "scope", "n", "accuracy", "precision", "recall", "F1", "yes ratio",
               "unread"], rows, 2), *notes])


def labels_section(metrics: dict[str, Any]) -> Section | None:
    sets = label_sets(metrics)
    if sets != ["original", "corrected"]:
        return None
    info = metrics.get("labels") or {}
    rows = []
    for protocol in present(metrics):
        for (scope, a), (_, b) in zip(scopes(protocol, metrics[protocol]["original"]),
                                      scopes(protocol, metrics[protocol]["corrected"]),
                                      strict=True):
            delta = "-" if a.get("f1") is None or b.get("f1") is None else \
                pct(b["f1"] - a["f1"], signed=True)
            rows.append([NAMES[protocol], scope, str(a["n"]), str(b["n"]),
                         with_interval(a, "f1"), with_interval(b, "f1"), delta])
    text = (f"RePOPE (Neuhaus and Hein 2025, arXiv 2504.15707) re-annotated POPE's COCO "
            f"images: in this run {info.get('relabelled', 0)} questions are relabelled and "
            f"{info.get('left_out', 0)} left out as ambiguous (corrections.json, "
            f"version {info.get('manifest', '')}). The same answers, scored both ways.")
    blocks: list[Any] = [Table(["protocol", "scope", "n", "n corrected", "F1 original",
                                "F1 corrected", "Δ"], rows, 2), Note(text)]
    if info.get("n_problems"):
        blocks.append(Note(f"{info['n_problems']} corrections did not fit the data and were "
                           f"not applied: {'; '.join(info.get('problems') or [])}"))
    return Section("Original against corrected labels (RePOPE)", blocks)


def sources_section(metrics: dict[str, Any], labels: str) -> Section | None:
    sources = (metrics.get(PAPER, {}).get(labels) or {}).get("sources") or {}
    if not sources:
        return None
    rows = [[source, s, str(b["n"]), with_interval(b, "accuracy"), with_interval(b, "f1"),
             with_interval(b, "yes_ratio")] for source, by in sources.items()
            for s, b in by.items()]
    return Section("Per source of the images (the paper's protocol)", [
        Table(["source", "setting", "n", "accuracy", "F1", "yes ratio"], rows, 2)])


def sections(metrics: dict[str, Any]) -> list[Any]:
    labels = label_sets(metrics)[0]
    out: list[Any] = []
    if PAPER in metrics:
        out.append(paper_section(metrics, labels))
    out.append(harness_section(metrics, labels))
    if metrics.get("differences"):
        out.append(differences.section(DifferenceSummary.model_validate(
            metrics["differences"])))
    out.append(labels_section(metrics))
    out.append(sources_section(metrics, labels))
    return [s for s in out if s is not None]
