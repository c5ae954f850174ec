"""Every command visioneval prints for the user to run works when pasted: the resume line
starts as the user's command did (`uv run visioneval`, `python -m visioneval`, `visioneval`),
a key or URL hint names the flag of the command in use (evaluate's and vqa's judge have
their own), and the data, builtin-model and judge-cost lines say what actually exists."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load, salbench_args

from visioneval.invocation import Started, prefix

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "vqa"
P3 = ("--configs", "P3")


def verdict(prompt) -> str:
    """A judge's verdict: 9 of 10 on every dimension the rubric's prompt asks for."""
    keys = re.findall(r'"(\w+)": <0-10>', prompt.text)
    return json.dumps({"reasoning": "ok", "details": {}, "scores": dict.fromkeys(keys, 9)})


def _started(orig_argv, argv0, uv=False, parent_is_uv=None, on_path=None) -> Started:
    return Started(tuple(orig_argv), argv0, uv, parent_is_uv, on_path)


def test_prefix_follows_how_the_process_was_started(tmp_path):
    script = tmp_path / "bin" / "visioneval"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    other = tmp_path / "other" / "visioneval"
    other.parent.mkdir()
    other.write_text("#!/bin/sh\n")
    venv_python = "/proj/.venv/bin/python"
    cases = {
        # `uv run visioneval ...`: uv starts the script; its child carries uv's mark.
        "uv run visioneval": _started([venv_python, str(script)], str(script), True, True),
        # `uv run python -m visioneval ...`
        "uv run python -m visioneval": _started([venv_python, "-m", "visioneval"],
                                                "/x/visioneval/__main__.py", True, True),
        # `python3 -m visioneval` from a shell that `uv run bash` started: the mark is
        # inherited, but uv did not start this process.
        "python3 -m visioneval": _started(["python3", "-m", "visioneval"],
                                          "/x/visioneval/__main__.py", True, False),
        f"{venv_python} -X utf8 -m visioneval": _started(
            [venv_python, "-X", "utf8", "-m", "visioneval"], "/x/__main__.py"),
        # The script found on PATH: its name; another copy (or none on PATH): its path.
        "visioneval": _started([venv_python, str(script)], str(script), on_path=str(script)),
        str(other): _started([venv_python, str(other)], str(other), on_path=str(script)),
        # Not the visioneval command (Python code, tests): the usual spelling.
        "visioneval ": _started([venv_python, "-m", "pytest"], "/x/pytest", True, True),
    }
    for expected, started in cases.items():
        assert prefix(started) == expected.strip(), expected
    assert prefix(_started(["python", "-m", "visionevalx"], "/x/__main__.py")) == "visioneval"


def _resume_line(text: str, marker: str) -> list[str]:
    """The command after `marker` on the one line that has it, split as a shell would."""
    match = re.search(re.escape(marker) + r" (.+?)(?: \(add --max-cost|\[/\]|$)",
                      flat(text))
    assert match, text
    return shlex.split(match.group(1))


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "UV_OFFLINE": "1", **extra}


@pytest.mark.slow
def test_uv_run_prints_uv_run_and_the_pasted_line_resumes(serve, synth_data, tmp_path):
    """Started as `uv run visioneval ...` (the project's own environment, offline): the
    line to continue says `uv run visioneval`, and run as printed it finishes the run."""
    uv = shutil.which("uv")
    assert uv is not None, "the project is run with uv"
    server = serve()
    out = tmp_path / "run"
    args = salbench_args(server, synth_data, out, *P3, "--price-in", "1000", "--price-out",
                         "1000", "--max-cost", "0.5", "--concurrency", "1", "--no-cache",
                         "--no-report")
    stopped = subprocess.run([uv, "run", "visioneval", *map(str, args)], cwd=ROOT,
                             env=_env(), capture_output=True, text=True, timeout=300)
    assert stopped.returncode == 3, stopped.stderr
    words = _resume_line(stopped.stderr, "Continue with:")
    assert words[:4] == ["uv", "run", "visioneval", "salbench"], words
    assert words[4:] == ["--resume", str(out), "--base-url", server.base_url + "/v1"]
    done = len(journal(out))
    pasted = subprocess.run(words, cwd=ROOT, env=_env(), capture_output=True, text=True,
                            timeout=300)
    assert pasted.returncode == 0, pasted.stderr
    assert len(journal(out)) == 8 > done and load(out)["P3"]["strict"]["n"] == 8


@pytest.mark.slow
@pytest.mark.parametrize("how", ["module", "script"])
def test_python_m_and_the_script_print_their_own_spelling(how, serve, synth_data, tmp_path):
    """`python -m visioneval` prints that interpreter and -m; the `visioneval` script on
    PATH prints `visioneval` (neither started by uv, although this test runs under it).
    Failed samples say how to retry them, and that line, run as printed, retries them."""
    server = serve(fail_first=3, faults=("500",))
    out = tmp_path / "run"
    args = [*map(str, salbench_args(server, synth_data, out, *P3, "--max-attempts", "1",
                                    "--no-cache", "--no-report"))]
    bin_dir = str(Path(sys.executable).parent)
    env = {k: v for k, v in _env(PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
           .items() if not k.startswith("UV_RUN")}
    command = [sys.executable, "-m", "visioneval"] if how == "module" else ["visioneval"]
    first = subprocess.run([*command, *args], env=env, capture_output=True, text=True,
                           timeout=300)
    assert first.returncode == 1, first.stderr
    words = _resume_line(first.stderr, "retry them with:")
    assert words[:len(command)] == command, words
    assert words[len(command):] == ["salbench", "--resume", str(out), "--base-url",
                                    server.base_url + "/v1"]
    pasted = subprocess.run(words, env=env, capture_output=True, text=True, timeout=300)
    assert pasted.returncode == 0, pasted.stderr
    assert load(out)["P3"]["strict"]["n"] == 8 and load(out)["P3"]["strict"]["n_errors"] == 0


def _cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"id": "d1", "input": "Describe.", "output": "A cat.",
                                "evaluators": [{"judge": "image-description"}]}) + "\n")
    return path


def _evaluate(cases: Path, url: str, out: Path, *extra: str):
    return invoke("evaluate", cases, "--judge-backend", "openai", "--judge-model", "m",
                  "--judge-base-url", url, "--out", out, "--no-progress", "--no-report",
                  *extra)


def test_evaluate_key_lines_name_its_judge_flags(serve, tmp_path, monkeypatch):
    """evaluate's model is its judge: a refused, unsent or missing key is said with
    --judge-api-key-env, the option evaluate has, and following the line works."""
    server = serve(answer=verdict, required_key="sesame")
    url = server.base_url + "/v1"
    cases = _cases(tmp_path)
    unsent = _evaluate(cases, url, tmp_path / "a")
    assert unsent.exit_code == 2
    assert "unless --judge-api-key-env names it" in unsent.stderr
    assert "use --judge-api-key-env NAME" in unsent.stderr
    assert " --api-key-env" not in unsent.stderr
    monkeypatch.setenv("WRONG_KEY", "not-it")
    refused = _evaluate(cases, url, tmp_path / "b", "--judge-api-key-env", "WRONG_KEY")
    assert refused.exit_code == 2 and "the key in $WRONG_KEY" in refused.stderr
    assert "use --judge-api-key-env NAME" in refused.stderr
    missing = _evaluate(cases, url, tmp_path / "c", "--judge-api-key-env", "NO_SUCH_KEY")
    assert missing.exit_code == 2
    assert "set $NO_SUCH_KEY (or name another variable with --judge-api-key-env)" in \
        missing.stderr
    monkeypatch.setenv("JUDGE_KEY", "sesame")
    followed = _evaluate(cases, url, tmp_path / "d", "--judge-api-key-env", "JUDGE_KEY")
    assert followed.exit_code == 0, followed.output
    assert "sesame" not in followed.output


def test_a_missing_v1_is_said_with_the_judge_url_flag(serve, tmp_path):
    server = serve(answer=verdict)
    cases = _cases(tmp_path)
    slip = _evaluate(cases, server.base_url, tmp_path / "a")
    assert slip.exit_code == 2
    hint = re.search(r"use --judge-base-url (\S+)", slip.stderr)
    assert hint, slip.stderr
    followed = _evaluate(cases, hint.group(1), tmp_path / "b")  # the URL it says, instead
    assert followed.exit_code == 0, followed.output


def _vqa_judge(model_url: str, judge_url: str, out: Path, *extra: str):
    return invoke("vqa", "--data", EXAMPLE / "questions.jsonl", "--scorer", "judge",
                  "--judge-backend", "openai", "--judge-model", "m", "--judge-base-url",
                  judge_url, "--backend", "openai", "--model", "m", "--base-url", model_url,
                  "--out", out, "--no-progress", "--no-report", *extra)


def test_vqa_says_which_key_flag_for_which_model(serve, tmp_path, monkeypatch):
    """vqa has the model's --api-key-env and its judge's --judge-api-key-env: each refused
    key is said with its own."""
    model = serve(answer=lambda p: "B", required_key="model-key")
    judge = serve(answer=verdict, required_key="judge-key")
    monkeypatch.setenv("MODEL_KEY", "model-key")
    monkeypatch.setenv("JUDGE_KEY", "judge-key")
    murl, jurl = model.base_url + "/v1", judge.base_url + "/v1"
    no_model_key = _vqa_judge(murl, jurl, tmp_path / "a", "--judge-api-key-env", "JUDGE_KEY")
    assert no_model_key.exit_code == 2 and murl in no_model_key.stderr
    assert "use --api-key-env NAME" in no_model_key.stderr
    no_judge_key = _vqa_judge(murl, jurl, tmp_path / "b", "--api-key-env", "MODEL_KEY")
    assert no_judge_key.exit_code == 2 and jurl in no_judge_key.stderr
    assert "use --judge-api-key-env NAME" in no_judge_key.stderr
    both = _vqa_judge(murl, jurl, tmp_path / "c", "--api-key-env", "MODEL_KEY",
                      "--judge-api-key-env", "JUDGE_KEY")
    assert both.exit_code in (0, 1), both.output  # 1: some answers wrong is not an error
    assert load(tmp_path / "c")["overall"]["n"] == 12


def test_vqa_names_the_builtin_model_it_has_and_when(tmp_path):
    refused = invoke("vqa", "--data", EXAMPLE / "questions.jsonl", "--backend", "builtin",
                     "--model", "random", "--out", tmp_path / "a", "--no-progress")
    assert refused.exit_code == 2
    assert "vqa has no builtin model with these options (random answers with --scorer " \
        "choice" in refused.stderr
    followed = invoke("vqa", "--data", EXAMPLE / "questions.jsonl", "--backend", "builtin",
                      "--model", "random", "--scorer", "choice", "--out", tmp_path / "b",
                      "--no-progress", "--no-report")
    assert followed.exit_code == 0, followed.output


def test_a_judge_is_priced_by_its_own_flags_and_said_once(serve, tmp_path):
    """The model is priced by --price-in/--price-out; the judge on your own server has no
    price until --judge-price-in/--judge-price-out give one: its cost is unknown, the line
    that says how to price it is said once and names the judge's flags, never the model's;
    given, the judge's tokens are priced, recorded, and kept by a resume."""
    model = serve(answer=lambda p: "B")
    judge = serve(answer=verdict)
    out = tmp_path / "run"
    result = _vqa_judge(model.base_url + "/v1", judge.base_url + "/v1", out,
                        "--price-in", "1", "--price-out", "2")
    assert result.exit_code in (0, 1), result.output
    reason = load(out, "run.json")["counts"]["cost"]["unavailable"]
    assert reason == "judge: no price for m at 127.0.0.1 (your own server?)"
    said = " ".join(result.stdout.split())
    assert said.count("--judge-price-in") == 1 and "--price-in" not in said
    assert "to price it: --judge-price-in USD --judge-price-out USD per million tokens" in said
    limited = _vqa_judge(model.base_url + "/v1", judge.base_url + "/v1", tmp_path / "b",
                         "--price-in", "1", "--price-out", "2", "--max-cost", "1")
    assert limited.exit_code == 2 and "--judge-price-in USD" in limited.stderr

    priced = tmp_path / "priced"
    result = _vqa_judge(model.base_url + "/v1", judge.base_url + "/v1", priced,
                        "--price-in", "1", "--price-out", "2", "--judge-price-in", "3",
                        "--judge-price-out", "4", "--no-cache")
    assert result.exit_code in (0, 1), result.output
    info = load(priced, "run.json")
    assert info["pricing"] == {"price_in": 1.0, "price_out": 2.0, "judge_price_in": 3.0,
                               "judge_price_out": 4.0}
    usage = info["sessions"][-1]["usage"]
    expected = 0.0
    for role, (price_in, price_out) in (("model", (1, 2)), ("judge", (3, 4))):
        for block in usage[role].values():
            expected += (price_in * block["prompt_tokens"]
                         + price_out * block["completion_tokens"]) / 1e6
    cost = info["counts"]["cost"]
    assert usage["judge"] and cost["usd"] == pytest.approx(expected, rel=1e-9)
    assert "--judge-price-in/--judge-price-out" in cost["source"]
    dry = _vqa_judge(model.base_url + "/v1", judge.base_url + "/v1", tmp_path / "dry",
                     "--judge-price-in", "3", "--judge-price-out", "4", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "judge price     $3 in / $4 out per million tokens (--judge-price-in/" \
        "--judge-price-out)" in dry.stdout
    assert "judge cost      at least $" in dry.stdout


def test_salbench_says_to_add_splits_when_the_folder_holds_one_split(synth_data, tmp_path):
    """The synthetic set holds P3 only: the default (both splits) names the flag that runs
    what is there, and with it the run works; configs named directly get --configs."""
    base = ["salbench", "--backend", "builtin", "--model", "random", "--data-dir",
            str(synth_data), "--samples", "2", "--no-progress", "--no-report"]
    refused = invoke(*base, "--out", tmp_path / "a")
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1
    assert refused.stderr.rstrip().endswith(
        "it holds P3, P3_box, P3_box_img: add --splits synthetic")
    added = shlex.split(refused.stderr.rstrip().rpartition("add ")[2])
    assert invoke(*base, "--out", tmp_path / "b", *added).exit_code == 0
    named = invoke(*base, "--configs", "P3,O3", "--out", tmp_path / "c")
    assert named.exit_code == 2 and named.stderr.rstrip().endswith("add --configs P3")
    added = shlex.split(named.stderr.rstrip().rpartition("add ")[2])
    assert invoke(*base, "--configs", "P3,O3", "--out", tmp_path / "d", *added
                  ).exit_code == 0
    assert load(tmp_path / "d", "run.json")["options"]["configs"] == ["P3"]


def test_illusionbench_says_which_subsets_the_folder_holds(illusion_data, tmp_path):
    only = tmp_path / "icon"
    only.mkdir()
    for path in illusion_data.rglob("Illusion_ICON-*.parquet"):
        shutil.copy(path, only / path.name)
    base = ["illusionbench", "--backend", "builtin", "--model", "random", "--data-dir",
            str(only), "--samples", "2", "--no-progress", "--no-report"]
    refused = invoke(*base, "--out", tmp_path / "a")
    assert refused.exit_code == 2
    assert refused.stderr.rstrip().endswith("it holds ICON: add --subsets ICON")
    added = shlex.split(refused.stderr.rstrip().rpartition("add ")[2])
    assert invoke(*base, "--out", tmp_path / "b", *added).exit_code == 0


def _backticked(text: str, containing: str) -> list[str]:
    found = [c for c in re.findall(r"`([^`]+)`", flat(text)) if containing in c]
    assert found, text
    return shlex.split(found[0])


def test_merge_of_missing_shards_prints_the_resume_that_runs_them(synth_data, tmp_path):
    shard = tmp_path / "shard1"
    run = ["salbench", "--backend", "builtin", "--model", "random", "--data-dir",
           str(synth_data), *P3, "--no-progress", "--no-report"]
    assert invoke(*run, "--shard", "1/2", "--out", shard).exit_code == 0
    merged = tmp_path / "merged"
    result = invoke("merge", shard, "--out", merged, "--allow-partial", "--no-report")
    assert result.exit_code == 1, result.output
    words = _resume_line(result.stderr, "this runs them:")
    assert words == ["visioneval", "salbench", "--resume", str(merged)]
    assert invoke(*words[1:], "--no-progress", "--no-report").exit_code == 0
    assert load(merged)["P3"]["strict"]["n"] == 8


def test_a_dry_run_of_another_benchmarks_run_names_its_command(synth_data, tmp_path):
    out = tmp_path / "run"
    assert invoke("salbench", "--backend", "builtin", "--model", "random", "--data-dir",
                  synth_data, *P3, "--samples", "2", "--out", out, "--no-progress",
                  "--no-report").exit_code == 0
    wrong = invoke("illusionbench", "--resume", out, "--dry-run")
    assert wrong.exit_code == 2
    words = _backticked(wrong.stderr, "--resume")
    assert words == ["visioneval", "salbench", "--resume", str(out)]
    assert invoke(*words[1:], "--dry-run").exit_code == 0


@pytest.mark.slow
def test_layout_names_its_captioner_key_flag(serve, tmp_path, monkeypatch):
    canvas = tmp_path / "canvas"
    assert invoke("data", "synth-layout", "--out", canvas, "--n", "2").exit_code == 0
    server = serve(answer=lambda p: "A login screen.", required_key="caption-key")
    args = ["layout", "--base-dir", canvas, "--caption-backend", "openai", "--caption-model",
            "m", "--caption-base-url", server.base_url + "/v1", "--embedder", "bow",
            "--no-progress", "--workers", "1"]
    refused = invoke(*args, "--out", tmp_path / "a.json")
    assert refused.exit_code == 2
    assert "use --caption-api-key-env NAME" in refused.stderr, refused.stderr
    monkeypatch.setenv("CAPTION_KEY", "caption-key")
    followed = invoke(*args, "--out", tmp_path / "b.json", "--caption-api-key-env",
                      "CAPTION_KEY")
    assert followed.exit_code == 0, followed.output
