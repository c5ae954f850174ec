"""What a user sees in a wide terminal: every line of every command's normal output (stdout
and stderr, the progress bar included) is at most 100 columns, a run ends short (its
benchmark's main table with 95% intervals, the counts, the cost, the report and where the
rest is), `visioneval show` prints the rest, and what a user typed prints as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from cli_helpers import flat, invoke, journal, load
from lmms_logs import line, salbench_metrics, write

from visioneval.terminal import WIDTH

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture
def wide(monkeypatch):
    """A terminal far wider than visioneval draws (rich reads COLUMNS)."""
    monkeypatch.setenv("COLUMNS", "250")


def lines_of(result) -> list[str]:
    return [*result.stdout.splitlines(), *result.stderr.splitlines()]


def fits(result, what: str) -> list[str]:
    """The command's lines, once checked: it succeeded (or exited as promised) and no line
    is wider than WIDTH."""
    found = lines_of(result)
    wide = [f"{len(x)}: {x}" for x in found if len(x) > WIDTH]
    assert not wide, f"{what}: lines over {WIDTH} columns:\n" + "\n".join(wide)
    return found


@pytest.mark.slow
def test_a_salbench_run_ends_in_25_lines_and_show_prints_the_rest(wide, synth_data, tmp_path):
    """24 samples (D, R and VR on the synthetic set), progress bar included: the main table
    with each config's EM and macro F1 beside its 95% interval, then the counts, cost,
    report and the command that prints every table."""
    out = tmp_path / "run"
    result = invoke("salbench", "--backend", "builtin", "--model", "popout", "--data-dir",
                    synth_data, "--splits", "synthetic", "--tasks", "D,R,VR", "--out", out)
    assert result.exit_code == 0, result.output
    printed = fits(result, "salbench")
    assert len(printed) <= 25, "\n".join(printed)
    metrics = load(out)
    assert sum(b["strict"]["n"] for b in metrics.values()) == 24
    for config, block in metrics.items():
        strict = block["strict"]
        low, high = strict["exact_match_ci95"]
        row = next(x for x in result.stdout.splitlines() if x.startswith(f"{config} "))
        assert f"{100 * strict['exact_match']:.1f} [{100 * low:.1f}, {100 * high:.1f}]" in row
    assert "Why published numbers differ" not in result.stdout  # that is for `show`
    assert result.stdout.splitlines()[-1] == f"all tables: visioneval show {out}"
    shown = invoke("show", out)
    assert shown.exit_code == 0, shown.output
    fits(shown, "show")
    for title in ("Both parsers", "Tasks pooled per image set", "Why published numbers differ",
                  "By difficulty"):
        assert title in shown.stdout


@pytest.mark.slow
def test_what_a_user_typed_prints_as_written(wide, synth_data, tmp_path):
    """A value is never read as rich markup or an emoji code: `jpeg:-1` in an error line,
    `[bold]` in a run directory's path in every line that names it."""
    refused = invoke("salbench", "--backend", "builtin", "--model", "popout", "--data-dir",
                     synth_data, "--configs", "P3", "--variant", "jpeg:-1", "--out",
                     tmp_path / "x")
    assert refused.exit_code == 2
    assert refused.stderr.startswith("error: --variant jpeg:-1: ")
    assert "\N{THUMBS DOWN SIGN}" not in refused.stderr
    out = tmp_path / "run [bold]one[/bold]"
    result = invoke("salbench", "--backend", "builtin", "--model", "popout", "--data-dir",
                    synth_data, "--configs", "P3", "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    assert f"-> {out}" in flat(result.stdout) and f"report: {out / 'report.html'}" in \
        flat(result.stdout)
    assert "visioneval show" in result.stdout and "'" in result.stdout  # quoted to paste
    shown = invoke("show", out)
    assert flat(shown.stdout).startswith(f"salbench: popout, 0-shot, {out} (finished)")


def _cases(folder: Path) -> Path:
    """Validator-only cases (no judge to serve)."""
    from helpers import png_bytes

    (folder / "a.png").write_bytes(png_bytes())
    cases = [{"id": f"c{i}", "input": "Count.", "images": ["a.png"],
              "output": f"{i} bottles, 3 cans", "expected_output": "2 bottles, 3 cans",
              "evaluators": [{"validator": "count"}]} for i in range(4)]
    path = folder / "cases.yaml"
    path.write_text(yaml.safe_dump(cases))
    return path


def _lmms_logs(real: Path, logs: Path) -> Path:
    """A builtin run's answers as lmms-eval's --log_samples lines (tests/lmms_logs.py)."""
    for config in ("P3",):
        rows = []
        for record in journal(real):
            meta, text = record["metadata"], record["response"]["text"]
            prompt = next(p for p in record["prompt"][0]["parts"] if isinstance(p, str))
            rows.append(line("0.7", meta["row"], record["target"], text, prompt,
                             salbench_metrics(meta["image_id"], text, record["target"],
                                              ("orientation", "color", "size"))))
        write(logs / f"20250801_101010_samples_{config.lower()}.jsonl", rows)
    return logs


@pytest.mark.slow
def test_every_command_a_user_meets_fits_100_columns(wide, serve, synth_data, illusion_data,
                                                       tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    server = serve()  # the loopback model, as `visioneval loopback` serves it
    quiet = ("--no-progress",)
    steps: list[tuple[str, list[object]]] = [
        ("demo", ["demo", "--out", "results/demo"]),
        ("synth-salbench", ["data", "synth-salbench", "--out", "data/s", "--n", "4"]),
        ("synth-illusionbench", ["data", "synth-illusionbench", "--out", "data/ib"]),
        ("synth-psychophysics", ["data", "synth-psychophysics", "--out", "data/psy", "--n",
                                 "2"]),
        ("synth-layout", ["data", "synth-layout", "--out", "data/canvas", "--n", "3"]),
        ("salbench loopback", ["salbench", "--backend", "openai", "--base-url",
                               server.base_url + "/v1", "--model", "m", "--data-dir",
                               synth_data, "--splits", "synthetic", "--out", "results/a"]),
        ("salbench builtin", ["salbench", "--backend", "builtin", "--model", "random",
                              "--data-dir", synth_data, "--splits", "synthetic", "--out",
                              "results/b"]),
        ("salbench variants", ["salbench", "--backend", "builtin", "--model", "popout",
                               "--data-dir", synth_data, "--configs", "P3", "--variant",
                               "blind", "--variant", "jpeg:30", "--out", "results/c"]),
        ("salbench shard 1", ["salbench", "--backend", "builtin", "--model", "random",
                              "--data-dir", synth_data, "--configs", "P3", "--shard", "1/2",
                              "--out", "results/s1", *quiet]),
        ("salbench shard 2", ["salbench", "--backend", "builtin", "--model", "random",
                              "--data-dir", synth_data, "--configs", "P3", "--shard", "2/2",
                              "--out", "results/s2", *quiet]),
        ("merge", ["merge", "results/s1", "results/s2", "--out", "results/merged"]),
        ("illusionbench", ["illusionbench", "--backend", "builtin", "--model", "random",
                           "--data-dir", illusion_data, "--out", "results/ib"]),
        ("vqa", ["vqa", "--data", EXAMPLES / "vqa" / "questions.jsonl", "--scorer", "choice",
                 "--group-col", "category", "--backend", "openai", "--base-url",
                 server.base_url + "/v1", "--model", "m", "--out", "results/vqa"]),
        ("psychophysics", ["psychophysics", "--backend", "builtin", "--model", "popout",
                           "--data", "data/psy", "--out", "results/psy"]),
        ("layout", ["layout", "--base-dir", "data/canvas", "--model", "gpt-4o", "--variant",
                    "image_only", "--out", "results/layout"]),
        ("evaluate", ["evaluate", _cases(tmp_path), "--out", "results/eval"]),
        ("run", ["run", EXAMPLES / "own_benchmark" / "colours.py:ColoursDefinition",
                 "--backend", "builtin", "--model", "random", "-o", "n=6", "--out",
                 "results/own"]),
        ("suite", ["suite", "--benchmarks", "salbench,vqa", "--backend", "builtin",
                   "--model", "random", "-o", f"salbench.data_dir={synth_data}", "-o",
                   "salbench.splits=synthetic", "-o",
                   f"vqa.data={EXAMPLES / 'vqa' / 'questions.jsonl'}", "-o",
                   "vqa.scorer=choice", "--out", "results/suite"]),
        ("suite --dry-run", ["suite", "--benchmarks", "salbench,vqa", "--backend", "openai",
                             "--model", "gpt-4o", "-o", f"salbench.data_dir={synth_data}",
                             "-o", "salbench.splits=synthetic", "-o",
                             f"vqa.data={EXAMPLES / 'vqa' / 'questions.jsonl'}", "-o",
                             "vqa.scorer=choice", "--out", "results/dry", "--dry-run"]),
        ("salbench --dry-run", ["salbench", "--backend", "openai", "--model", "gpt-4o",
                                "--data-dir", synth_data, "--configs", "P3", "--dry-run"]),
        ("compare", ["compare", "results/a", "results/b"]),
        ("compare --out", ["compare", "results/a", "results/b", "--out", "results/cmp"]),
        ("compare variants", ["compare", "results/c", "results/b"]),
        ("compare illusionbench", ["compare", "results/ib", "results/ib"]),
        ("compare --reference", ["compare", "results/a", "results/b", "--reference", "paper",
                                 "--reference-model", "GPT-4o"]),
        ("reference salbench", ["reference", "salbench"]),
        ("reference illusionbench", ["reference", "illusionbench"]),
        ("reference --model", ["reference", "salbench", "--model", "LLaVA-1.6-7B"]),
        ("power", ["power", "results/a", "--n", "1000"]),
        ("power two runs", ["power", "results/a", "results/b", "--difference", "0.05"]),
        ("cache list", ["cache", "list"]),
        ("report", ["report", "results/a"]),
        ("rescore", ["rescore", "--from", "lmms-eval", "logs", "--out", "results/rescored"]),
    ]
    shows = ["results/a", "results/c", "results/merged", "results/ib", "results/vqa",
             "results/psy", "results/layout", "results/eval", "results/rescored",
             "results/suite/salbench/random"]
    real_for_logs = tmp_path / "results" / "lmms-real"
    assert invoke("salbench", "--backend", "builtin", "--model", "random", "--data-dir",
                  synth_data, "--configs", "P3", "--prompt", "lmms-eval", "--out",
                  real_for_logs, *quiet, "--no-report").exit_code == 0
    _lmms_logs(real_for_logs, tmp_path / "logs")
    printed = {}
    for what, argv in steps:
        result = invoke(*argv)
        assert result.exit_code == 0, f"{what}: {result.output}"
        printed[what] = fits(result, what)
    for run in shows:
        result = invoke("show", run)
        assert result.exit_code == 0, f"show {run}: {result.output}"
        fits(result, f"show {run}")
    own = invoke("show", "results/own", "--definition",
                 EXAMPLES / "own_benchmark" / "colours.py:ColoursDefinition")
    assert "colours: accuracy" in fits(own, "show --definition")[1]
    # Short endings: a run's main table and a few lines, not every table.
    assert len(printed["illusionbench"]) <= 30 and len(printed["vqa"]) <= 20
    assert len(printed["psychophysics"]) <= 35
    # compare and suite draw tables, never Markdown (comparison.md keeps it), and say what
    # differs between the runs once.
    for what in ("compare", "compare variants", "compare --reference", "suite"):
        assert not any(re.match(r"\s*\|", x) for x in printed[what]), what
        assert not any("\\_" in x or "\\[" in x for x in printed[what]), what
    warnings = [x for x in printed["compare variants"] if x.startswith("warning: ")]
    assert warnings and len(warnings) == len(set(warnings))
    assert not any(x.startswith("> ") for x in printed["compare variants"])
    assert (tmp_path / "results" / "cmp" / "comparison.md").read_text().startswith("| Model")
