"""POPE's tables: the paper's table first, then how lmms-eval and VLMEvalKit score the same
answers, why the protocols differ, and what RePOPE's corrected labels change; in the
terminal (within 100 columns), as `results.csv` and `protocols.csv`."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from visioneval.benchmarks.pope.options import PopeOptions
from visioneval.benchmarks.pope.scoring import relabelled
from visioneval.benchmarks.pope.spec import AMBIGUOUS, LMMS, PAPER, SETTINGS, VLMEVALKIT
from visioneval.core.printed import print_table
from visioneval.core.records import Record
from visioneval.core.store import RunStore
from visioneval.core.variant_ids import family_of
from visioneval.fmt import interval, pct
from visioneval.harness import differences
from visioneval.harness.differences import DifferenceSummary
from visioneval.io import csvcells
from visioneval.terminal import line

NAMES = {PAPER: "paper", LMMS: "lmms-eval", VLMEVALKIT: "VLMEvalKit"}
SCOPES = {"pooled": "pooled (pope)", "overall": "Overall"}
INTERVALS = ("[95%]: cluster bootstrap over images (an image's questions drawn together), "
             "1000 seeded resamples. Percent.")
LMMS_YES = ("*lmms-eval's pope_yes_ratio counts the \"yes\" labels, not the answers "
            "(tasks/pope/utils.py lines 74-84): 50.0 on every POPE setting, whatever the model.")
UNREAD = ("unread: lmms-eval's answers that are not exactly \"yes\" or \"no\" (left out of "
          "precision and recall); VLMEvalKit's answers read Unknown (counted as \"no\").")


def with_interval(block: dict[str, Any], metric: str) -> str:
    """"88.0 [86.9, 89.1]": a metric in percent with its 95% interval; "-" when absent."""
    value = block.get(metric)
    if value is None:
        return "-"
    span = block.get(f"{metric}_ci95")
    return f"{pct(value)} [{interval(span, joiner=', ')}]" if span else pct(value)


def present(metrics: dict[str, Any]) -> list[str]:
    """The protocols the run scored, in visioneval's order."""
    return [p for p in (PAPER, LMMS, VLMEVALKIT) if isinstance(metrics.get(p), dict)]


def label_sets(metrics: dict[str, Any]) -> list[str]:
    return list((metrics.get("labels") or {}).get("sets") or ["original"])


def scopes(protocol: str, labelled: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(scope, block) of one protocol under one label set: each setting, then its pooled
    block (lmms-eval's `pope`, VLMEvalKit's Overall)."""
    for setting in SETTINGS:
        if setting in labelled.get("settings", {}):
            yield setting, labelled["settings"][setting]
    for key in ("pooled", "overall"):
        if isinstance(labelled.get(key), dict):
            yield SCOPES[key], labelled[key]


# -- the terminal --------------------------------------------------------------------------

def show_paper(metrics: dict[str, Any], model: str, console: Console, labels: str) -> None:
    """The paper's table: each setting apart, every metric, then LLaVA-1.5's mean F1."""
    block = metrics[PAPER][labels]
    rows = [[s, str(b["n"]), with_interval(b, "accuracy"), pct(b.get("precision"), missing="-"),
             pct(b.get("recall"), missing="-"), with_interval(b, "f1"),
             pct(b.get("yes_ratio"), missing="-")]
            for s, b in scopes(PAPER, block)]
    which = "" if labels == "original" else ", RePOPE's corrected labels"
    print_table(console, f"POPE · {model} · the paper's protocol (evaluate.py), each setting "
                f"apart{which}", ["setting", "n", "accuracy [95%]", "precision", "recall",
                                  "F1 [95%]", "yes ratio"], rows, numeric_from=1)
    mean = block.get("mean_f1") or {}
    if "f1" in mean:
        line(console, f"  mean F1 of the three settings: {with_interval(mean, 'f1')} "
                      "(LLaVA-1.5's one POPE number; the paper reports the settings apart)")
    errors = sum(b.get("n_errors", 0) for _, b in scopes(PAPER, block))
    if errors:
        line(console, f"  {errors} failed requests are left out (an error is never a "
                      "wrong answer); --resume asks them again")


def show_harnesses(metrics: dict[str, Any], console: Console, labels: str) -> None:
    """The same answers under lmms-eval's and VLMEvalKit's rules, side by side."""
    rows: list[list[str]] = []
    for protocol in (LMMS, VLMEVALKIT):
        if protocol not in metrics:
            continue
        for i, (scope, b) in enumerate(scopes(protocol, metrics[protocol][labels])):
            yes = pct(b.get("lmms_yes_ratio"), missing="-") + "*" if protocol == LMMS \
                else "-"
            rows.append([NAMES[protocol] if i == 0 else "", scope, str(b["n"]),
                         pct(b.get("accuracy"), missing="-"),
                         pct(b.get("precision"), missing="-"),
                         pct(b.get("recall"), missing="-"), with_interval(b, "f1"), yes,
                         str(b.get("unparsed", 0))])
    if not rows:
        return
    console.print()
    print_table(console, "The same questions under each harness's prompt and rules",
                ["harness", "scope", "n", "accuracy", "precision", "recall", "F1 [95%]",
                 "yes ratio", "unread"], rows, numeric_from=2, text=(1,))
    notes = [UNREAD]
    if LMMS in metrics:
        notes.insert(0, LMMS_YES)
    for note in notes:
        line(console, note, style="dim")


def show_labels(metrics: dict[str, Any], console: Console) -> None:
    """What RePOPE's corrected labels change, per setting, under the paper's protocol."""
    if "corrected" not in label_sets(metrics) or "original" not in label_sets(metrics):
        return
    protocol = PAPER if PAPER in metrics else present(metrics)[0]
    original, fixed = metrics[protocol]["original"], metrics[protocol]["corrected"]
    rows = []
    for (scope, a), (_, b) in zip(scopes(protocol, original), scopes(protocol, fixed),
                                  strict=True):
        rows.append([scope, str(b["n"]), pct(a.get("f1"), missing="-"), with_interval(b, "f1"),
                     _delta(a, b, "f1"), pct(a.get("accuracy"), missing="-"),
                     pct(b.get("accuracy"), missing="-"), _delta(a, b, "accuracy")])
    info = metrics.get("labels") or {}
    console.print()
    print_table(console, f"RePOPE's corrected labels ({NAMES[protocol]}'s protocol): "
                f"{questions(info.get('relabelled', 0))} relabelled, "
                f"{questions(info.get('left_out', 0))} left out as ambiguous",
                ["scope", "n", "F1", "F1 corrected [95%]", "Δ", "accuracy", "corrected", "Δ"],
                rows, numeric_from=1)
    line(console, "Δ: corrected minus original labels, same answers (points). RePOPE: "
                  "Neuhaus and Hein 2025, arXiv 2504.15707.", style="dim")
    if info.get("n_problems"):
        line(console, f"  {info['n_problems']} corrections did not fit the data and were not "
                      f"applied, e.g. {info['problems'][0]}")


def questions(n: int) -> str:
    return f"{n:,} question" + ("" if n == 1 else "s")


def _delta(a: dict[str, Any], b: dict[str, Any], metric: str) -> str:
    if a.get(metric) is None or b.get(metric) is None:
        return "-"
    return pct(b[metric] - a[metric], signed=True)


def show_main(metrics: dict[str, Any], model: str, console: Console) -> None:
    """The tables a run ends with: the paper's (or the one protocol run), the harnesses'
    reading of the same questions, why they differ, and the corrected labels."""
    labels = label_sets(metrics)[0]
    if PAPER in metrics:
        show_paper(metrics, model, console, labels)
        line(console, INTERVALS, style="dim")
    show_harnesses(metrics, console, labels)
    summary = metrics.get("differences")
    if summary:
        console.print()
        differences.show(DifferenceSummary.model_validate(summary), console)
    show_labels(metrics, console)


def show(metrics: dict[str, Any], model: str, console: Console) -> None:
    """Every POPE table (`visioneval show`): the main ones, then per source when the data
    holds several."""
    show_main(metrics, model, console)
    for labels in label_sets(metrics):
        sources = (metrics.get(PAPER, {}).get(labels) or {}).get("sources") or {}
        for source, by in sources.items():
            console.print()
            rows = [[s, str(b["n"]), with_interval(b, "accuracy"), with_interval(b, "f1"),
                     pct(b.get("yes_ratio"), missing="-")] for s, b in by.items()]
            print_table(console, f"{source} ({labels} labels), the paper's protocol",
                        ["setting", "n", "accuracy [95%]", "F1 [95%]", "yes ratio"], rows)


# -- files ---------------------------------------------------------------------------------

CSV_HEADER = ["protocol", "labels", "scope", "n", "n_errors", "tp", "fp", "tn", "fn",
              "unread", "accuracy_pct", "accuracy_low_pct", "accuracy_high_pct",
              "precision_pct", "recall_pct", "f1_pct", "f1_low_pct", "f1_high_pct",
              "yes_ratio_pct", "lmms_yes_ratio_pct"]


def csv_rows(metrics: dict[str, Any]) -> Iterator[list[str]]:
    for protocol in present(metrics):
        for labels, labelled in metrics[protocol].items():
            for scope, b in scopes(protocol, labelled):
                acc, f1 = b.get("accuracy_ci95") or [], b.get("f1_ci95") or []
                yield [protocol, labels, scope, str(b["n"]), str(b["n_errors"]), str(b["tp"]),
                       str(b["fp"]), str(b["tn"]), str(b["fn"]), str(b["unparsed"]),
                       pct(b.get("accuracy")), *(pct(v) for v in acc or (None, None)),
                       pct(b.get("precision")), pct(b.get("recall")), pct(b.get("f1")),
                       *(pct(v) for v in f1 or (None, None)), pct(b.get("yes_ratio")),
                       pct(b.get("lmms_yes_ratio"))]
            mean = labelled.get("mean_f1") or {}
            if "f1" in mean:
                f1 = mean.get("f1_ci95") or (None, None)
                yield [protocol, labels, "mean F1 of the settings", str(mean["n"]), "", "", "",
                       "", "", "", "", "", "", "", "", pct(mean["f1"]), pct(f1[0]), pct(f1[1]),
                       "", ""]


def write(metrics: dict[str, Any], options: PopeOptions, directory: Path) -> list[Path]:
    """results.csv (every protocol, label set and scope) and protocols.csv (every item whose
    verdict a protocol changes, and the cause), the latter from the run's journal."""
    buf = io.StringIO()
    out = csvcells.writer(buf, lineterminator="\n")
    out.writerow(CSV_HEADER)
    out.writerows(csv_rows(metrics))
    results = directory / "results.csv"
    results.write_text(buf.getvalue())
    written = [results]
    if metrics.get("differences") and (directory / "samples.jsonl").exists():
        records = _difference_records(RunStore.open(directory).iter_latest(),
                                      label_sets(metrics)[0])
        written.append(differences.write_run_csv(records, PAPER, options.protocols,
                                                 directory / "protocols.csv"))
    return written


def _difference_records(records: Iterator[Record], labels: str) -> Iterator[Record]:
    """The original family's records, scored against the label set the summary used."""
    for record in records:
        if family_of(record) is not None:
            continue
        if labels == "original":
            yield record
            continue
        target = record.target if isinstance(record.target, dict) else {}
        label = str(target.get("corrected", target.get("answer", "")))
        if label != AMBIGUOUS:
            yield record if label == target.get("answer") else relabelled(record, label)
