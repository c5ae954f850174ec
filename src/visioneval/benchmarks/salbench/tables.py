"""Paper-style tables: Table 1's shape (macro F1, percent, one decimal) and the same
layout for exact match; the terminal's main table (EM and F1 with their intervals) and
every other table `visioneval show` prints."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from visioneval.benchmarks.salbench.metrics import NO_DIFFICULTY
from visioneval.benchmarks.salbench.spec import CONFIGS, ConfigSpec
from visioneval.core.printed import print_table
from visioneval.fmt import interval, pct
from visioneval.io import csvcells
from visioneval.stats.bootstrap import few_clusters_note
from visioneval.terminal import line

# Column -> config, in the order of the results CSV that github.com/MikeWise2718/salbench
# describes ("Output Format": Model,Shot,Detection_NAT,...).
TABLE1_COLUMNS = {
    "Detection_NAT": "O3", "Detection_SYN": "P3",
    "Referring_NAT": "O3_box", "Referring_SYN": "P3_box",
    "VisualRef_NAT": "O3_box_img", "VisualRef_SYN": "P3_box_img",
}
HEADLINE_PARSER = "strict"


def percent(block: dict[str, Any] | None, metric: str) -> str:
    """A cell: the metric in percent with one decimal, or empty when it was not computed."""
    return pct((block or {}).get(metric))


def table_rows(metrics: dict[str, Any], label: dict[str, Any], metric: str,
               parser: str = HEADLINE_PARSER) -> list[list[str]]:
    header = ["Model", "Shot", *TABLE1_COLUMNS]
    cells = [percent(metrics.get(cfg, {}).get(parser), metric) for cfg in TABLE1_COLUMNS.values()]
    return [header, [str(label["model"]), str(label["shots"]), *cells]]


def to_csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csvcells.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def write(metrics: dict[str, Any], label: dict[str, Any], directory: Path) -> list[Path]:
    out = []
    for name, metric in (("table1.csv", "macro_f1"), ("table1_exact_match.csv", "exact_match")):
        path = directory / name
        path.write_text(to_csv(table_rows(metrics, label, metric)))
        out.append(path)
    rows = target_absent_rows(metrics)
    if rows:  # only a run with target-absent rows has this table
        path = directory / "target_absent.csv"
        path.write_text(to_csv([TARGET_ABSENT_HEADER, *rows]))
        out.append(path)
    return out


PARSERS = ("strict", "lenient")
TARGET_ABSENT_HEADER = ["config", "prompt", "parser", "n", "errors", "false_alarms",
                        "false_alarm_rate", "ci95_low", "ci95_high", "correct_rejections",
                        "unparsed", "features_named"]


def target_absent_blocks(block: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A config's target-absent figures per prompt family, the headline prompt first:
    (family, {parser: figures}); none when the config had no target-absent rows."""
    found = [("paper", block["target_absent"])] if block.get("target_absent") else []
    return found + list((block.get("target_absent_by_prompt") or {}).items())


def target_absent_rows(metrics: dict[str, Any]) -> list[list[str]]:
    """target_absent.csv's rows: per config, prompt family and parser, the false alarms
    on target-absent rows (rate and Wilson interval in percent, one decimal)."""
    rows = []
    for config, block in metrics.items():
        for family, parsers in target_absent_blocks(block):
            for parser in PARSERS:
                a = parsers[parser]
                low, high = a.get("false_alarm_rate_ci95") or (None, None)
                named = "; ".join(f"{f} {k}" for f, k in a["by_feature_named"].items() if k)
                rows.append([config, family, parser, str(a["n"]), str(a["n_errors"]),
                             str(a["false_alarms"]), pct(a.get("false_alarm_rate")), pct(low),
                             pct(high), str(a["correct_rejections"]), str(a["n_unparsed"]),
                             named])
    return rows


def false_alarms(figures: dict[str, Any]) -> str:
    """"7/20 = 35.0% [18.1%, 56.7%]": false alarms on target-absent rows, the rate and its
    95% Wilson interval; or why there is no rate."""
    if figures.get("false_alarm_rate") is None:
        return f"not available: {figures.get('unavailable', 'not computed')}"
    low, high = figures["false_alarm_rate_ci95"]
    return (f"{figures['false_alarms']}/{figures['n']} = {pct(figures['false_alarm_rate'])}% "
            f"[{pct(low)}%, {pct(high)}%]")


def target_absent_lines(metrics: dict[str, Any]) -> list[str]:
    """One line per config (and prompt family) that had target-absent rows: its false
    alarms under the headline parser, then lenient, the features named, correct rejections
    and failures."""
    lines = []
    for config, block in metrics.items():
        for family, parsers in target_absent_blocks(block):
            strict, lenient = parsers["strict"], parsers["lenient"]
            where = config if family == "paper" else f"{config}, {family} prompt"
            named = ", ".join(f"{f} {k}" for f, k in strict["by_feature_named"].items() if k)
            line = (f"{where}: false alarms on target-absent scenes: {false_alarms(strict)} "
                    f"(lenient {false_alarms(lenient)})")
            line += f"; named: {named}" if named else ""
            line += (f"; correct rejections {strict['correct_rejections']} (lenient "
                     f"{lenient['correct_rejections']})")
            line += f"; {strict['n_errors']} failed requests" if strict["n_errors"] else ""
            lines.append(line)
    return lines


TARGET_ABSENT_NOTE = ("Target-absent scenes (every object alike, answer \"None\"; written by "
                      "data synth-salbench --target-absent) are left out of every other "
                      "figure. A false alarm names a feature where none differs; a correct "
                      "rejection says none differs (strict: \"None\" exactly; lenient: "
                      "names no feature). Intervals: 95% Wilson.")


SHORT_TASK = {"D": "Detection", "R": "Referring", "VR": "Visual Ref."}


INDENTED = " Indented: the same rows with lmms-eval's prompt (--prompt both)."


def _families(metrics: dict[str, Any]) -> Iterator[tuple[str, ConfigSpec, str, dict[str, Any]]]:
    """Every config's rows (config, its spec, row name, parsers' blocks): the headline, then
    a second prompt family's answers (--prompt both) under its name, indented."""
    for config, block in metrics.items():
        yield config, CONFIGS[config], "", block
        for family, other in (block.get("by_prompt") or {}).items():
            yield config, CONFIGS[config], f" {family}", other


def _indented_note(metrics: dict[str, Any]) -> str:
    """The caption's last sentence when some rows are a second prompt family's."""
    return INDENTED if any(block.get("by_prompt") for block in metrics.values()) else ""


def with_interval(block: dict[str, Any], metric: str) -> str:
    """"87.5 [62.5, 100.0]": the metric in percent with its 95% interval."""
    value = percent(block, metric)
    if not value:
        return "-"
    span = block.get(f"{metric}_ci95")
    return f"{value} [{interval(span, joiner=', ')}]" if span else value


MAIN_CAPTION = ("P3 synthetic, O3 natural. EM exact match; F1 the paper's macro F1; strict "
                "parser (the reference). [95% interval]: bootstrap over samples, 1000 seeded "
                "resamples.")


def show_main(metrics: dict[str, Any], label: dict[str, Any], console: Console) -> None:
    """The table a run ends with: per config, its counts and EM and macro F1 of the headline
    parser with their 95% intervals (within 100 columns)."""
    note = MAIN_CAPTION + _indented_note(metrics)
    rows = []
    for config, spec, name, parsers in _families(metrics):
        strict = parsers["strict"]
        rows.append([name or config, "" if name else SHORT_TASK[spec.task],
                     str(strict["n"]), str(strict["n_errors"]), str(strict["n_unparsed"]),
                     with_interval(strict, "exact_match"), with_interval(strict, "macro_f1")])
    print_table(console, f"SalBench: {label['model']}, {label['shots']}-shot (percent)",
                ["config", "task", "n", "errors", "unparsed", "EM [95%]", "F1 [95%]"], rows,
                note, numeric_from=2)


def show(metrics: dict[str, Any], label: dict[str, Any], console: Console) -> None:
    """Every SalBench table (`visioneval show`): the main table, both parsers side by side,
    the false alarms on target-absent scenes, the tasks pooled, the protocols and the
    prompt effect, and the results by difficulty."""
    show_main(metrics, label, console)
    note = ("strict: the reference parser (the paper's numbers); lenient: forgives format. "
            "EM exact match; F1 the paper's macro F1." + _indented_note(metrics))
    rows = []
    for _, spec, name, parsers in _families(metrics):
        strict, lenient = parsers["strict"], parsers["lenient"]
        rows.append([name or SHORT_TASK[spec.task], spec.dataset, str(strict["n"]),
                     str(strict["n_errors"]), str(strict["n_unparsed"]),
                     percent(strict, "exact_match") or "-", percent(strict, "macro_f1") or "-",
                     percent(lenient, "exact_match") or "-",
                     percent(lenient, "macro_f1") or "-"])
    console.print()
    print_table(console, "Both parsers (percent)",
                ["task", "set", "n", "errors", "unparsed", "EM\nstrict", "F1\nstrict",
                 "EM\nlenient", "F1\nlenient"], rows, note, numeric_from=2)
    lines = target_absent_lines(metrics)
    if lines:
        console.print()
        line(console, "Target-absent scenes", style="bold")
        for text in lines:
            line(console, text)
        line(console, TARGET_ABSENT_NOTE, style="dim")
    pooled = pooled_rows(metrics)
    if pooled:
        console.print()
        print_table(console, "Tasks pooled per image set (strict parser, percent)",
                    POOLED_HEADER, pooled, "intervals: bootstrap over scenes (each with all "
                    "its tasks' answers; EM's studentized), 1000 seeded resamples")
        for text in pooled_notes(metrics):
            line(console, text)
    console.print()
    columns = protocol_columns(metrics)
    note = ("paper's F1: strict parser, every class; sample F1 is not the paper's; lmms-eval "
            "O3 averages 3 of 7 classes (docs/salbench.md)")
    if len(columns) > len(PROTOCOL_COLUMNS):
        note += "; lmms-eval prompt: each row asked again with it (--prompt both)"
    print_table(console, "Why published numbers differ (percent)",
                ["config", *map(_two_lines, columns.values())], protocol_rows(metrics), note)
    header, rows = prompt_effect_rows(metrics, compact=True)
    if rows:
        console.print()
        print_table(console, "Prompt effect: the same rows under both prompts (percent)",
                    list(map(_two_lines, header)), rows, "McNemar's exact p on EM; paired "
                    "bootstrap 95% interval of the F1 difference; * significant at 5%")
    levels = difficulty_rows(metrics)
    console.print()
    if levels:
        print_table(console, "SalBench by difficulty (strict parser, percent)",
                    ["config", "difficulty", "n", "errors", "EM", "F1"], levels,
                    numeric_from=2)
    else:
        line(console, "By difficulty: not available: " + NO_DIFFICULTY + ".")


PROTOCOL_COLUMNS = {
    "headline_macro_f1": "paper's F1",
    "lenient_macro_f1": "lenient F1",
    "sample_f1": "sample F1",
    "lmms_eval_o3_3class_f1": "lmms-eval O3 3-class F1",
}
PROTOCOL_NOTE = ("The same answers scored four ways. paper's F1: strict parser, macro F1 over "
                 "every class (the paper's F1 Overall); lenient: forgiving parser; sample F1: "
                 "per-sample set F1 averaged (lmms-eval's sample_f1, not "
                 "the paper's); lmms-eval O3 3-class: lmms-eval averages O3's per-class F1 "
                 "over orientation, color and size only, 3 of the 7 classes, as it has since "
                 "its SalBench task was merged (github.com/EvolvingLMMs-Lab/lmms-eval/pull/744), "
                 "so its O3 numbers are not the paper's.")


# With `--prompt both`: the second request family's answers (lmms-eval's prompt), scored as
# the paper does and as lmms-eval main does for O3 (its own number, prompt and rule).
SECOND_PROMPT_COLUMNS = {
    "lmms_eval_prompt_macro_f1": "lmms-eval prompt F1",
    "lmms_eval_prompt_lmms_eval_o3_3class_f1": "lmms-eval prompt, O3 3-class F1",
}
SECOND_PROMPT_NOTE = ("lmms-eval prompt: each row asked again (--prompt both) with the "
                      "question plus \"Answer the question using a single word or phrase.\", "
                      "scored by the paper's rule; with lmms-eval's O3 3-class mean it is "
                      "the number lmms-eval main reports.")


def protocol_columns(metrics: dict[str, Any]) -> dict[str, str]:
    """The protocol view's columns: four from the same answers, two more when the run sent
    lmms-eval's prompt as a second family."""
    columns = dict(PROTOCOL_COLUMNS)
    views = [block.get("protocols") or {} for block in metrics.values()]
    if any(k.startswith("lmms_eval_prompt_") for view in views for k in view):
        columns |= SECOND_PROMPT_COLUMNS
    return columns


def protocol_rows(metrics: dict[str, Any]) -> list[list[str]]:
    columns = protocol_columns(metrics)
    rows = []
    for config, block in metrics.items():
        view = block.get("protocols") or {}
        rows.append([config, *[pct(view.get(key)) or "-" for key in columns]])
    return rows


PROMPT_EFFECT_HEADER = ["config", "pairs", "EM {a}", "EM {b}", "EM Δ", "McNemar p",
                        "F1 {a}", "F1 {b}", "F1 Δ (95% interval)", "significant at 5%"]
COMPACT = (0, 1, 2, 3, 5, 6, 7, 8)  # the terminal's columns (EM Δ is the two EMs apart)


def prompt_effect_rows(metrics: dict[str, Any], compact: bool = False
                       ) -> tuple[list[str], list[list[str]]]:
    """The paired test of prompt against prompt per config (--prompt both): header, rows;
    no rows when the run sent one prompt. `compact`: the terminal's narrower columns."""
    header, rows = _prompt_effect(metrics)
    if not compact:
        return header, rows
    header = [header[i] for i in COMPACT]
    header[-1] = "F1 Δ 95%"
    short = []
    for row in rows:
        verdict = row[-1]
        row = [row[i] for i in COMPACT]
        if verdict.startswith("not available"):
            row[-1] = "n/a"
        else:  # a star marks a significant difference
            row[-1] = row[-1].split("(")[-1].rstrip(")").replace(" to ", "..")
            row[4] += "*" if "EM" in verdict else ""
            row[-1] += "*" if "F1" in verdict else ""
        short.append(row)
    return header, short


def _prompt_effect(metrics: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    rows, names = [], ("first", "second")
    for config, block in metrics.items():
        for effect in (block.get("prompt_effect") or {}).values():
            names = (effect["first"], effect["second"])
            if "unavailable" in effect:
                rows.append([config, str(effect.get("n_pairs", 0)), *["-"] * 7,
                             f"not available: {effect['unavailable']}"])
                continue
            em, f1 = effect["exact_match"], effect["macro_f1"]
            low, high = f1.get("difference_ci95") or (None, None)
            verdict = [name for name, test in (("EM", em), ("F1", f1)) if test["significant"]]
            rows.append([config, str(effect["n_pairs"]), pct(em["first"]), pct(em["second"]),
                         pct(em["difference"], signed=True), f"{em['p']:.3g}",
                         pct(f1["first"]), pct(f1["second"]),
                         f"{pct(f1['difference'], signed=True)} "
                         f"({pct(low, signed=True)} to {pct(high, signed=True)})",
                         ", ".join(verdict) if verdict else "no"])
    header = [h.format(a=names[0], b=names[1]) for h in PROMPT_EFFECT_HEADER]
    return header, rows


PROMPT_EFFECT_NOTE = ("The same rows under both prompts, paired: McNemar's exact test on "
                      "exact match, a paired bootstrap (1000 seeded resamples) of the macro-F1 "
                      "difference (second minus first); rows scored under one prompt only are "
                      "left out. \"no\": the difference may be noise.")


POOLED_HEADER = ["set", "tasks", "n", "scenes", "EM", "EM 95%", "F1", "F1 95%"]
POOLED_NOTE = ("Tasks pooled: one image set's Detection (D), Referring (R) and Visual "
               "Referring (VR) answers together (those in the run). The tasks ask about the "
               "same scenes, so their answers are not independent: the intervals are a "
               "cluster bootstrap that draws scenes, each with all its answers (1000 seeded "
               "resamples; exact match's each studentized by its own cluster-robust error, "
               "the bootstrap-t; docs/intervals.md).")


def pooled_notes(metrics: dict[str, Any]) -> list[str]:
    """"P3: only 12 images: the interval's 95% is measured from 20 on", per image set whose
    pooled intervals draw fewer scenes than `stats.bootstrap.HOLDS_FROM`."""
    notes, seen = [], set()
    for config, block in metrics.items():
        pooled = block.get("pooled_tasks") or {}
        dataset = CONFIGS[config].dataset if config in CONFIGS else config
        count = pooled.get("exact_match_ci95_n_clusters")
        if dataset in seen or not isinstance(count, int):
            continue
        seen.add(dataset)
        note = few_clusters_note(count, str(pooled.get("exact_match_ci95_clusters", "image")))
        if note:
            notes.append(f"{dataset}: {note}")
    return notes


def pooled_rows(metrics: dict[str, Any]) -> list[list[str]]:
    """One row per image set whose tasks were pooled (`pooled_tasks`, the same in each of
    its configs): exact match and macro F1 with their intervals over scenes, percent."""
    rows, seen = [], set()
    for config, block in metrics.items():
        pooled = block.get("pooled_tasks")
        dataset = CONFIGS[config].dataset if config in CONFIGS else config
        if not pooled or dataset in seen:
            continue
        seen.add(dataset)
        tasks = "+".join(CONFIGS[c].task if c in CONFIGS else c for c in pooled["configs"])
        rows.append([dataset, tasks, str(pooled["n"]),
                     str(pooled.get("n_images", "")), pct(pooled.get("exact_match")) or "-",
                     interval(pooled.get("exact_match_ci95")),
                     pct(pooled.get("macro_f1")) or "-", interval(pooled.get("macro_f1_ci95"))])
    return rows


def difficulty_rows(metrics: dict[str, Any]) -> list[list[str]]:
    rows = []
    for config, block in metrics.items():
        for level, scores in (block.get("by_difficulty") or {}).items():
            rows.append([config, level, str(scores["n"]), str(scores["n_errors"]),
                         percent(scores, "exact_match") or "-",
                         percent(scores, "macro_f1") or "-"])
    return rows


def _two_lines(header: str) -> str:
    """A long column name broken at the space nearest its middle (a narrower column)."""
    spaces = [i for i, ch in enumerate(header) if ch == " "]
    if len(header) <= 7 or not spaces:
        return header
    cut = min(spaces, key=lambda i: abs(i - len(header) / 2))
    return header[:cut] + "\n" + header[cut + 1:]
