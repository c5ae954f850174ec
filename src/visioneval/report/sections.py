"""What each kind of run shows: its paper-style tables and charts (as HTML blocks), and how
its records appear in the sample browser (target, class labels, one view per parser or
protocol with the answer and whether it was right)."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from visioneval import fmt
from visioneval.records import Record
from visioneval.report import charts
from visioneval.report.rundir import RunView


@dataclass(frozen=True)
class Section:
    title: str
    body: str  # HTML


def table(header: list[str], rows: list[list[Any]], numeric_from: int = 1) -> str:
    """An HTML table; cells from column `numeric_from` on are right-aligned."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            cls = ' class="num"' if i >= numeric_from else ""
            cells.append(f"<td{cls}>{html.escape('' if cell is None else str(cell))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="data"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def pct(value: float | None) -> str:
    return fmt.pct(value, missing="-")


def no_records(view: RunView) -> Section:
    """What an empty run shows instead of its tables: nothing to score, and why."""
    counts = view.info.get("counts", {})
    skipped = counts.get("skipped_rows", 0)
    why = (f"every row was skipped ({skipped}; the reasons are in run.json under sessions)"
           if skipped else "no sample finished (see the run's sessions in run.json)")
    return Section("Results", f"<p class=note>This run has no records: {html.escape(why)}. "
                              "There is nothing to score, chart or browse.</p>")


# -- SalBench -----------------------------------------------------------------------------

def salbench_sections(view: RunView) -> list[Section]:
    from visioneval.benchmarks.salbench.parse import target_labels
    from visioneval.benchmarks.salbench.spec import CONFIGS, TASKS

    rows = []
    for config, block in view.metrics.items():
        strict, lenient = block["strict"], block["lenient"]
        spec = CONFIGS[config]
        rows.append([f"{TASKS[spec.task]} ({config})", strict["n"], strict["n_errors"],
                     f"{strict['n_unparsed']} / {lenient['n_unparsed']}",
                     pct(strict.get("exact_match")), pct(strict.get("macro_f1")),
                     pct(lenient.get("exact_match")), pct(lenient.get("macro_f1")),
                     pct(strict.get("sample_f1"))])
    out = [Section("Results (percent)", table(
        ["config", "n", "errors", "unparsed strict / lenient", "EM", "macro F1",
         "EM lenient", "macro F1 lenient", "sample F1"], rows) +
        "<p class=note>EM: exact match of the label set. Macro F1: the paper's 'F1 Overall', "
        "the mean of per-class F1 (TP/FP/FN pooled over samples) over all classes. strict is "
        "the reference parser and the headline; lenient forgives answer format.</p>")]
    for config, block in view.metrics.items():
        per_class = block["strict"].get("per_class")
        if not per_class:
            continue
        classes = list(per_class)
        series = {m.capitalize(): [100 * per_class[c][m] for c in classes]
                  for m in ("precision", "recall", "f1")}
        bars = charts.grouped_bars(classes, series, f"{config}: per-class (strict)", "percent")
        matrix = salbench_confusion(view.records, config, classes, target_labels)
        out.append(Section(f"{config}: per class", f'<div class="charts">{bars}{matrix}</div>'))
    return out


def salbench_confusion(records: list[Record], config: str, classes: list[str],
                       target_labels) -> str:
    """Gold label x predicted label counts (multi-label: every pair counts once), strict
    parser; answers with no class land in "(none)"."""
    columns = [*classes, "(none)"]
    counts = [[0] * len(columns) for _ in classes]
    for record in records:
        if record.group != config or not record.ok:
            continue
        predicted = [c for c in record.parsed.get("strict", []) if c in classes] or ["(none)"]
        for gold in target_labels(record.target):
            if gold in classes:
                for p in predicted:
                    counts[classes.index(gold)][columns.index(p)] += 1
    return charts.heatmap(classes, columns, counts, f"{config}: true vs predicted (strict)",
                          "predicted", "true")


def salbench_row(record: Record) -> dict[str, Any]:
    from visioneval.benchmarks.salbench.parse import target_labels

    views = {}
    for parser in ("strict", "lenient"):
        if parser in record.scores:
            views[parser] = {"a": ", ".join(record.parsed.get(parser, [])),
                             "ok": record.scores[parser]["exact_match"] == 1.0}
    return {"t": str(record.target), "labels": sorted(target_labels(str(record.target))),
            "v": views}


# -- IllusionBench ------------------------------------------------------------------------

def illusionbench_sections(view: RunView) -> list[Section]:
    from visioneval.benchmarks.illusionbench import tables as ib_tables

    protocols = list(view.metrics)
    subsets = sorted({s for p in view.metrics.values() for s in p},
                     key=["ICON", "LOGO", "IN"].index)
    rows = [[r["subset"], r["label"], pct(r["shape_recall"]),
             fmt.pct(r["shape_delta"], signed=True), pct(r["scene_recall"]),
             fmt.pct(r["scene_delta"], signed=True)] for r in ib_tables.rows(view.metrics)]
    out = [Section("Recall by protocol (percent; delta against the original protocol)",
                   table(["subset", "protocol", "shape", "Δ", "scene", "Δ"], rows, 2))]
    for key, label in (("shape_recall", "shape recall"), ("scene_recall", "scene recall")):
        series = {p: [_scaled(view.metrics[p].get(s, {}).get(key)) for s in subsets]
                  for p in protocols}
        out.append(Section(f"Protocols compared: {label}", charts.grouped_bars(
            subsets, series, f"{label} by protocol, same answers", "percent")))
    cats, parts = [], {"shape": [], "texture (scene)": [], "rest": []}
    for subset in subsets:
        dist = view.metrics.get("original", {}).get(subset, {}).get("distribution", {})
        for prompt in ("shape_prompt", "scene_prompt"):
            if "shape" in dist.get(prompt, {}):  # absent when no sample was scored
                cats.append(f"{subset} {prompt.replace('_', ' ')}")
                for part, key in zip(parts, ("shape", "texture", "rest"), strict=True):
                    parts[part].append(100 * dist[prompt][key])
    if cats:
        out.append(Section("Shape or scene? (original rule's buckets)", charts.stacked_bars(
            cats, parts, "what the answers name, per prompt")))
    notes = [f"{s} {task} label '{label}' is not among the prompt's options"
             for p in view.metrics.values() for s, block in p.items()
             for task, labels in block.get("labels_not_offered", {}).items() for label in labels]
    if notes:
        items = "".join(f"<li>{html.escape(n)}</li>" for n in dict.fromkeys(notes))
        out.append(Section("Labels the prompts do not offer", f"<ul>{items}</ul>"))
    return out


def _scaled(value: float | None) -> float | None:
    return None if value is None else 100 * value


def illusionbench_row(record: Record) -> dict[str, Any]:
    meta = record.metadata
    target = record.target if isinstance(record.target, dict) else {}
    label = target.get(meta.get("task", "shape"), "")
    views = {p: {"a": str(record.parsed.get(p, "")), "ok": s.get("correct") == 1.0}
             for p, s in record.scores.items()}
    return {"t": f"shape {target.get('shape')} / scene {target.get('scene')}",
            "labels": [label] if label else [], "v": views,
            "meta": f"{meta.get('task', '')} task, {meta.get('family', '')} prompt, "
                    f"{meta.get('difficulty', '')}"}


# -- evaluate -----------------------------------------------------------------------------

def evaluate_sections(view: RunView) -> list[Section]:
    evaluators = view.metrics.get("evaluators", {})
    rows = [[label, b["n"], b["passed"], pct(b.get("pass_rate")),
             "-" if b.get("mean_score") is None else f"{b['mean_score']:.3f}", b["errors"]]
            for label, b in evaluators.items()]
    out = [Section("Evaluators", table(["evaluator", "n", "passed", "pass rate %",
                                        "mean score", "errors"], rows))]
    labels = list(evaluators)
    if labels:
        rates = [_scaled(evaluators[k].get("pass_rate")) for k in labels]
        out.append(Section("Pass rate per evaluator", charts.evaluator_bars(
            labels, rates, "pass rate (errors excluded)")))
    cases = view.metrics.get("cases", {})
    rows = [[case, "yes" if b["passed_all"] else "no",
             "-" if b["mean_score"] is None else f"{b['mean_score']:.3f}",
             ", ".join(_result_cell(k, v) for k, v in b["evaluators"].items())]
            for case, b in cases.items()]
    out.append(Section("Cases", table(["case", "all passed", "mean score", "results"], rows)))
    return out


def _result_cell(label: str, result: dict[str, Any]) -> str:
    if result["status"] != "processed":
        return f"{label}: {result['status']}"
    return f"{label}: {result['score']:.2f} {'pass' if result['passed'] else 'fail'}"


def evaluate_row(record: Record) -> dict[str, Any]:
    result = record.parsed.get("result", {})
    status = result.get("status", "error")
    ok = result.get("passed") if status == "processed" else None
    answer = f"{status}, score {result['score']:.3f}" if result.get("score") is not None \
        else f"{status}: {result.get('details', {}).get('error', '')}"
    return {"t": f"case {record.metadata.get('case')}", "labels": [record.group],
            "v": {"result": {"a": answer, "ok": ok}}}


SECTIONS = {"salbench": salbench_sections, "illusionbench": illusionbench_sections,
            "evaluate": evaluate_sections}
ROWS = {"salbench": salbench_row, "illusionbench": illusionbench_row, "evaluate": evaluate_row}


def generic_row(record: Record) -> dict[str, Any]:
    views = {k: {"a": str(record.parsed.get(k, "")), "ok": None} for k in record.scores}
    return {"t": str(record.target), "labels": [], "v": views}
