"""The side-by-side view: each protocol's accuracies as the paper's leaderboard lays them out
(qAcc, fAcc, easy, hard, aAcc), per category and subcategory, the yes/no bias and the
figures' consistency; as `results.csv`, in the terminal and as the report's rows."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from visioneval.benchmarks.hallusionbench.spec import REFERENCE
from visioneval.core.printed import print_table
from visioneval.core.store import write_atomic
from visioneval.fmt import interval, pct
from visioneval.harness import differences
from visioneval.io import csvcells
from visioneval.terminal import line

LEADERBOARD = ("qAcc", "fAcc", "easy", "hard", "aAcc")  # the README's column order
COUNTS = {"aAcc": "n_aAcc", "fAcc": "n_fAcc", "qAcc": "n_qAcc", "easy": "n_easy",
          "hard": "n_hard"}
LEGEND = {
    "paper": "paper:      the question alone; every answer read by the paper's grader "
             "(GPT-4 with --judge-model; else visioneval's Yes/No rule), all 1,129 questions",
    "lmms-eval": "lmms-eval:  the same prompt and grader, only the 951 questions with a "
                 "figure",
    "vlmevalkit": "vlmevalkit: the same prompt, VLMEvalKit's Yes/No rule against the label, "
                  "the 951 questions with a figure",
}
INTERVAL_NOTE = ("[95%]: bootstrap over sets (each set's figures and question groups "
                 "together), 1000 seeded resamples.")


def blocks(metrics: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(row label, protocol block) for every protocol, then each under corrected labels."""
    for protocol, block in (metrics.get("protocols") or {}).items():
        yield protocol, block
    for protocol, block in (metrics.get("corrected") or {}).items():
        yield f"{protocol} (corrected)", block


def with_interval(block: dict[str, Any], name: str) -> str:
    """"58.3 [52.1, 64.0]": a metric in percent with its 95% interval."""
    value = block.get(name)
    if value is None:
        return "-"
    span = block.get(f"{name}_ci95")
    return f"{pct(value)} [{interval(span, joiner=', ')}]" if span else pct(value)


def leaderboard_rows(metrics: dict[str, Any]) -> list[list[str]]:
    rows = []
    for label, block in blocks(metrics):
        overall = block.get("overall", {})
        rows.append([label, str(block.get("n", 0)), with_interval(overall, "qAcc"),
                     with_interval(overall, "fAcc"), pct(overall.get("easy"), missing="-"),
                     pct(overall.get("hard"), missing="-"), with_interval(overall, "aAcc")])
    return rows


LEADERBOARD_HEADER = ["protocol", "questions", "qAcc [95%]", "fAcc [95%]", "easy", "hard",
                      "aAcc [95%]"]


def scope_rows(metrics: dict[str, Any], key: str) -> list[list[str]]:
    """Per category (`by_category`) or subcategory (`by_subcategory`): each protocol's
    five accuracies (percent) and question count."""
    rows = []
    scopes = list(dict.fromkeys(s for _, b in blocks(metrics) for s in b.get(key, {})))
    for scope in scopes:
        for label, block in blocks(metrics):
            found = block.get(key, {}).get(scope)
            if found is None:
                continue
            rows.append([scope, label, str(found.get("n_aAcc", 0)),
                         *(pct(found.get(m), missing="-") for m in LEADERBOARD)])
    return rows


SCOPE_HEADER = ["", "protocol", "questions", *LEADERBOARD]


def notes(metrics: dict[str, Any]) -> list[str]:
    """Lines under the leaderboard: VLMEvalKit's one number, failed and unclear answers."""
    out = []
    vlm = (metrics.get("protocols") or {}).get("vlmevalkit", {}).get("mean_of_three", {})
    if "value" in vlm:
        span = vlm.get("value_ci95")
        shown = f" [{interval(span, joiner=', ')}]" if span else ""
        out.append(f"VLMEvalKit's one number, the mean of aAcc, fAcc and qAcc: "
                   f"{pct(vlm['value'])}{shown} (VLMEvalKit's own, not the paper's)")
    for label, block in blocks(metrics):
        said = []
        if block.get("n_errors"):
            said.append(f"{block['n_errors']} failed requests left out (and the figures and "
                        f"groups they belong to: {block['overall'].get('incomplete', 0)})")
        if block.get("unclear"):
            said.append(f"{block['unclear']} answers read as neither yes nor no")
        if said:
            out.append(f"{label}: " + "; ".join(said))
    return out


def yes_no_rows(metrics: dict[str, Any]) -> list[list[str]]:
    found = (metrics.get("protocols") or {}).get(REFERENCE, {}).get("yes_no", {})
    if not found.get("n"):
        return []
    return [["yes in the labels", pct(found["truth_yes"])],
            ["yes as the paper infers it (right on yes, wrong on no)",
             pct(found["inferred_yes"])],
            ["difference (the paper's Pct Diff)", pct(found["difference"], signed=True)],
            ["wrong answers on a no question (the paper's FP Ratio)",
             pct(found.get("false_yes_share"), missing="-")],
            ["answers that say Yes / No / neither",
             f"{pct(found['said_yes'])} / {pct(found['said_no'])} / "
             f"{pct(found['said_neither'])}"]]


def figure_rows(metrics: dict[str, Any]) -> list[list[str]]:
    rows = []
    for label, block in blocks(metrics):
        f = block.get("figures", {})
        if f.get("n"):
            rows.append([label, str(f["n"]), pct(f["all_right"]), pct(f["mixed"]),
                         pct(f["all_wrong"]), pct(f["mean_accuracy"])])
    return rows


FIGURE_HEADER = ["protocol", "figures", "all right", "mixed", "all wrong", "mean accuracy"]


def show_main(metrics: dict[str, Any], model: str, console: Console) -> None:
    """The table a run ends with (the paper's leaderboard columns), its notes, then why the
    protocols differ."""
    print_table(console, f"HallusionBench: {model} (percent)", LEADERBOARD_HEADER,
                leaderboard_rows(metrics), INTERVAL_NOTE + " easy/hard: question pairs on "
                "original / edited figures.", numeric_from=1)
    for text in notes(metrics):
        line(console, text)
    found = metrics.get("differences")
    if found:
        console.print()
        differences.show(differences.DifferenceSummary.model_validate(found), console)


def show(metrics: dict[str, Any], model: str, console: Console) -> None:
    """Every table (`visioneval show`)."""
    show_main(metrics, model, console)
    for title, key in (("By category (percent)", "by_category"),
                       ("By subcategory (percent)", "by_subcategory")):
        console.print()
        print_table(console, title, SCOPE_HEADER, scope_rows(metrics, key), numeric_from=2)
    bias = yes_no_rows(metrics)
    if bias:
        console.print()
        print_table(console, "Yes/no bias, the paper's protocol (percent)", ["", "value"],
                    bias, numeric_from=1)
    console.print()
    print_table(console, "Figures: every question right, some, none (percent)",
                FIGURE_HEADER, figure_rows(metrics), numeric_from=1)
    console.print()
    line(console, "Protocols", style="bold")
    for protocol in metrics.get("protocols") or {}:
        line(console, LEGEND[protocol])
    labels = metrics.get("labels") or {}
    if labels.get("corrected_note"):
        line(console, f"labels: {labels['corrected_note']}")


CSV_HEADER = ["protocol", "labels", "scope", *(f"{m}_{k}" for m in LEADERBOARD
                                               for k in ("n", "pct", "low_pct", "high_pct"))]


def to_csv(metrics: dict[str, Any]) -> str:
    buf = io.StringIO()
    out = csvcells.writer(buf, lineterminator="\n")
    out.writerow(CSV_HEADER)
    for _, block in blocks(metrics):
        scopes = [("all", block.get("overall", {})), *block.get("by_category", {}).items(),
                  *block.get("by_subcategory", {}).items()]
        for scope, found in scopes:
            cells = []
            for m in LEADERBOARD:
                span = found.get(f"{m}_ci95") or ["", ""]
                cells += [found.get(COUNTS[m], 0), pct(found.get(m)),
                          *(pct(v) if v != "" else "" for v in span)]
            out.writerow([block["protocol"], block["label_set"], scope, *cells])
    return buf.getvalue()


def write(metrics: dict[str, Any], directory: Path) -> Path:
    path = directory / "results.csv"
    write_atomic(path, to_csv(metrics).encode())
    return path
