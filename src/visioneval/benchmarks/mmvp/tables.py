"""MMVP's tables: each protocol's pair and per-question accuracy under each label set, as
`results.csv` and in the terminal (the table a run ends with, then why the protocols differ,
what the corrections change and how the run generated against the references)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from visioneval.benchmarks.mmvp.spec import (
    LMMS_EVAL_GENERATION,
    PAPER_GENERATION,
    VLMEVALKIT_GENERATION,
)
from visioneval.core.printed import print_table
from visioneval.fmt import interval, pct
from visioneval.harness.differences import DifferenceSummary
from visioneval.harness.differences import show as show_differences
from visioneval.io import csvcells
from visioneval.terminal import line

# Each harness's own names of the two numbers ([P] gpt_grader.py prints "The accuracy is";
# [L] the yaml's metric_list; [V] report_acc_MMVP's keys).
NAMES = {"paper": ("-", "accuracy (pairs)"),
         "lmms-eval": ("mmvp_accuracy", "mmvp_pair_accuracy"),
         "vlmevalkit": ("Average", "Overall")}
LABEL_NAMES = {"original": "own", "corrected": "corrected"}
CSV_HEADER = ["protocol", "labels", "pair_accuracy_pct", "pair_ci95_low_pct",
              "pair_ci95_high_pct", "accuracy_pct", "ci95_low_pct", "ci95_high_pct",
              "pairs", "questions", "errors", "harness_pair_name", "harness_question_name"]


def rows(metrics: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for protocol, blocks in metrics.get("protocols", {}).items():
        for label_set in ("original", "corrected"):
            if isinstance(blocks.get(label_set), dict):
                yield protocol, label_set, blocks[label_set]


def _bounds(found: list[float] | None) -> tuple[str, str]:
    return ("", "") if not found else (pct(found[0]), pct(found[1]))


def to_csv(metrics: dict[str, Any]) -> str:
    buf = io.StringIO()
    out = csvcells.writer(buf, lineterminator="\n")
    out.writerow(CSV_HEADER)
    for protocol, label_set, b in rows(metrics):
        question_name, pair_name = NAMES.get(protocol, ("", ""))
        out.writerow([protocol, label_set, pct(b.get("pair_accuracy")),
                      *_bounds(b.get("pair_accuracy_ci95")), pct(b.get("accuracy")),
                      *_bounds(b.get("accuracy_ci95")), b.get("n_pairs", ""), b["n"],
                      b["n_errors"], pair_name, question_name])
    return buf.getvalue()


def write_csv(metrics: dict[str, Any], directory: Path) -> Path:
    path = directory / "results.csv"
    path.write_text(to_csv(metrics))
    return path


def with_interval(value: float | None, span: list[float] | None) -> str:
    if value is None:
        return "-"
    return f"{pct(value)} [{interval(span, joiner=', ')}]" if span else pct(value)


def main_rows(metrics: dict[str, Any]) -> list[list[str]]:
    out, previous = [], None
    protocols = metrics.get("protocols", {})
    for protocol, label_set, b in rows(metrics):
        unread = sum(protocols[protocol].get("unparsed", {}).values())
        out.append([protocol if protocol != previous else "", LABEL_NAMES[label_set],
                    with_interval(b.get("pair_accuracy"), b.get("pair_accuracy_ci95")),
                    with_interval(b.get("accuracy"), b.get("accuracy_ci95")),
                    str(b.get("n_pairs", 0)), str(b["n"]), str(b["n_errors"]),
                    str(unread) if protocol != previous else ""])
        previous = protocol
    return out


HEADER = ["protocol", "labels", "pairs [95%]", "questions [95%]", "pairs", "n", "errors",
          "unread"]
NOTE = ("pairs: both questions of a pair right (the paper's metric); [95%]: bootstrap over "
        "pairs, 1000 seeded resamples. labels: own = each protocol's (lmms-eval: its copy's), "
        "corrected = corrections.json.")


def show_main(metrics: dict[str, Any], model: str, console: Console) -> None:
    print_table(console, f"MMVP: {model}, accuracy (percent)", HEADER, main_rows(metrics),
                NOTE, numeric_from=2)
    for protocol, how in (metrics.get("readings") or {}).items():
        line(console, f"  {protocol} read by {how}")
    summary = metrics.get("differences")
    if summary:
        console.print()
        show_differences(DifferenceSummary.model_validate(summary), console)


def show(metrics: dict[str, Any], model: str, console: Console,
         generation: dict[str, Any] | None = None) -> None:
    """Every table (`visioneval show`): the main table and differences, the corrections,
    the unread answers, per pattern, and the generation settings against the references."""
    show_main(metrics, model, console)
    show_corrections(metrics, console)
    show_unread(metrics, console)
    show_patterns(metrics, console)
    if generation is not None:
        show_generation(generation, console)


def show_corrections(metrics: dict[str, Any], console: Console) -> None:
    block = metrics.get("corrections") or {}
    effect = block.get("effect")
    if not effect:
        return
    console.print()
    items = ", ".join(block.get("items", []))
    found = [[p, str(e.get("changed", 0)), pct(e.get("pair_accuracy"), signed=True),
              pct(e.get("accuracy"), signed=True)] for p, e in effect.items()]
    print_table(console, f"Corrected labels (corrections.json {block.get('version')}: Index "
                f"{items}) minus own labels (points)",
                ["protocol", "answers changed", "pairs", "questions"], found,
                "docs/mmvp.md lists each correction's sources and evidence", numeric_from=1)
    for note in metrics.get("label_notes") or ():
        line(console, f"note: {note}")


def show_unread(metrics: dict[str, Any], console: Console) -> None:
    found = [[p, why, str(n)] for p, b in metrics.get("protocols", {}).items()
             for why, n in b.get("unparsed", {}).items()]
    if found:
        console.print()
        print_table(console, "Answers a protocol could not read (scored wrong)",
                    ["protocol", "why", "answers"], found, numeric_from=2)


def show_patterns(metrics: dict[str, Any], console: Console) -> None:
    blocks = [(p, b.get("per_pattern") or {}) for p, label_set, b in rows(metrics)
              if label_set == "original"]
    names = list(dict.fromkeys(n for _, cells in blocks for n in cells))
    if not names:
        return
    header = ["pattern"]
    for protocol, _ in blocks:
        header += [f"{protocol} pairs", "questions"]
    found = []
    for name in names:
        row = [name]
        for _, cells in blocks:
            cell = cells.get(name, {})
            row += [pct(cell.get("pair_accuracy"), missing="-"),
                    pct(cell.get("accuracy"), missing="-")]
        found.append(row)
    console.print()
    print_table(console, "Per visual pattern, own labels (percent)", header, found,
                "patterns: PixMMVP's tags (the MMVP authors publish none per question); "
                "pair 94 has two tags and counts for neither", numeric_from=1)


def generation_lines(generation: dict[str, Any]) -> list[str]:
    temperature, tokens = generation.get("temperature"), generation.get("max_tokens")
    return [f"this run: temperature {temperature}, at most {tokens} tokens, for every prompt",
            f"paper: {PAPER_GENERATION}",
            f"lmms-eval: {LMMS_EVAL_GENERATION}",
            f"vlmevalkit: {VLMEVALKIT_GENERATION}"]


def show_generation(generation: dict[str, Any], console: Console) -> None:
    console.print()
    line(console, "Generation", style="bold")
    for text in generation_lines(generation):
        line(console, f"  {text}")
