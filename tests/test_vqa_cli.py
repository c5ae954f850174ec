"""`visioneval vqa`: the command generated from the benchmark's options, run for real against
the loopback server (the README's demo), its one-line errors and its resume."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import invoke, load

from visioneval.loopback.server import answer_hash

EXAMPLE = Path(__file__).parent.parent / "examples" / "vqa"


def vqa_args(server, data, out, *extra):
    return ["vqa", "--data", data, "--backend", "openai", "--base-url",
            server.base_url + "/v1", "--model", "m", "--out", out, "--no-progress",
            "--backoff-base", "0.01", "--backoff-cap", "0.05", *extra]


def test_the_readme_demo_runs_and_compares(serve, tmp_path):
    server = serve(answer=answer_hash)  # `visioneval loopback --answer hash`
    out = tmp_path / "run"
    result = invoke(*vqa_args(server, EXAMPLE / "questions.jsonl", out, "--scorer", "choice",
                              "--group-col", "category"))
    assert result.exit_code == 0, result.output
    assert round(100 * load(out)["overall"]["accuracy"], 1) == 41.7  # as the README says
    chance = tmp_path / "random"
    result = invoke("vqa", "--data", EXAMPLE / "questions.jsonl", "--scorer", "choice",
                    "--group-col", "category", "--backend", "builtin", "--model", "random",
                    "--out", chance, "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    assert round(100 * load(chance)["overall"]["accuracy"], 1) == 16.7
    refused = invoke("vqa", "--data", EXAMPLE / "questions.jsonl", "--scorer", "exact",
                     "--backend", "builtin", "--model", "random", "--out", tmp_path / "x")
    assert refused.exit_code == 2 and "vqa has no builtin model" in refused.stderr
    assert "overall" in result.stdout and (out / "report.html").exists()
    info = load(out, "run.json")
    assert Path(info["options"]["data"]).is_absolute()  # a resume from elsewhere finds it
    assert info["options"]["choices_col"] is None and info["options"]["scorer"] == "choice"
    compared = invoke("compare", out)
    assert compared.exit_code == 0, compared.output
    row = next(ln for ln in compared.stdout.splitlines() if ln.startswith("m "))
    assert row.split()[:7] == ["m", "choice", "41.7", "0.0", "50.0", "25.0", "50.0"]


def test_options_reach_the_benchmark(serve, tmp_path):
    server = serve(answer=lambda prompt: "two")
    server.stats.keep_bodies = True
    data = tmp_path / "d"
    shutil.copytree(EXAMPLE / "images", data / "images")
    (data / "count.jsonl").write_text(json.dumps(
        {"picture": "images/two_circles.png", "q": "How many?", "n": "2.01",
         "opts": "[\"1\", \"2\"]"}) + "\n")
    out = tmp_path / "run"
    result = invoke(*vqa_args(server, data, out, "--scorer", "number", "--image-col",
                              "picture", "--question-col", "q", "--answer-col", "n",
                              "--choices-col", "opts", "--prompt-suffix", "One number.",
                              "--tolerance", "0.01", "--samples", "1"))
    assert result.exit_code == 0, result.output
    assert load(out)["overall"]["accuracy"] == 1.0
    sent = server.stats.bodies[0]["messages"][0]["content"]
    assert [p["text"] for p in sent if p["type"] == "text"] == ["How many?\nA. 1\nB. 2\n"
                                                                "One number."]
    out2 = tmp_path / "strict"
    result = invoke(*vqa_args(server, data, out2, "--scorer", "number", "--image-col",
                              "picture", "--question-col", "q", "--answer-col", "n",
                              "--tolerance", "0.001"))
    assert result.exit_code == 0 and load(out2)["overall"]["accuracy"] == 0.0


def test_user_errors_are_one_line_and_exit_2(serve, tmp_path):
    server = serve()
    data = EXAMPLE / "questions.jsonl"
    cases = [
        (["--answer-col", "label"], "no column 'label'"),
        (["--scorer", "judge"], "error: --scorer judge needs --judge-backend and --judge-model"),
        (["--judge-model", "m"], "error: --judge-model is for --scorer judge"),
        (["--tolerance", "-1"], "--tolerance: Input should be greater than or equal to 0"),
    ]
    for extra, message in cases:
        result = invoke(*vqa_args(server, data, tmp_path / "x", *extra))
        assert result.exit_code == 2, result.output
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert server.stats.requests == 0 and not (tmp_path / "x").exists()
    missing = invoke(*vqa_args(server, tmp_path / "nothing.jsonl", tmp_path / "y"))
    assert missing.exit_code == 2 and "no such file or folder" in missing.stderr
    builtin = invoke("vqa", "--data", data, "--backend", "builtin", "--model", "random",
                     "--out", tmp_path / "z", "--no-progress")
    assert builtin.exit_code == 2 and len(builtin.stderr.strip().splitlines()) == 1
    assert "vqa" in builtin.stderr and not (tmp_path / "z").exists()


def test_skipped_rows_are_shown_and_the_rest_runs(serve, tmp_path):
    server = serve(answer=lambda prompt: "A")
    data = tmp_path / "d"
    shutil.copytree(EXAMPLE / "images", data / "images")
    rows = [{"image": "images/one_square.png", "question": "n?", "answer": "A",
             "choices": ["1", "2"]},
            {"image": "images/gone.png", "question": "n?", "answer": "A",
             "choices": ["1", "2"]}]
    (data / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = invoke(*vqa_args(server, data / "q.jsonl", tmp_path / "run", "--scorer",
                              "choice"))
    assert result.exit_code == 0, result.output
    assert "skipped q.jsonl row 2: column 'image': images/gone.png: no such file" in \
        result.stderr.replace("\n", " ")
    assert load(tmp_path / "run")["overall"]["n"] == 1


def test_resume_through_the_command(serve, tmp_path):
    server = serve(answer=lambda prompt: "B", fail_rate=0.5, faults=("500",), seed=4)
    out = tmp_path / "run"
    result = invoke(*vqa_args(server, EXAMPLE / "questions.jsonl", out, "--scorer", "choice",
                              "--max-attempts", "1", "--no-cache"))
    assert result.exit_code == 1 and "--resume" in result.stderr
    server.script.fail_rate = 0.0
    result = invoke("vqa", "--resume", out, "--no-progress", "--base-url",
                    server.base_url + "/v1")
    assert result.exit_code == 0, result.output
    overall = load(out)["overall"]
    low, high = overall.pop("accuracy_ci95")
    assert low < 0.25 < high and overall.pop("accuracy_se") > 0
    assert overall == {"n": 12, "n_errors": 0, "n_unparsed": 0, "n_ambiguous": 0,
                       "accuracy": 0.25}


def test_an_identical_rerun_is_answered_from_the_cache(serve, tmp_path):
    server = serve(answer=lambda prompt: "A")
    data = EXAMPLE / "questions.jsonl"
    cache = ["--cache-dir", tmp_path / "cache", "--scorer", "choice"]
    assert invoke(*vqa_args(server, data, tmp_path / "a", *cache)).exit_code == 0
    assert server.stats.requests == 12
    assert invoke(*vqa_args(server, data, tmp_path / "b", *cache)).exit_code == 0
    assert server.stats.requests == 12 and load(tmp_path / "b") == load(tmp_path / "a")
    assert load(tmp_path / "b", "run.json")["counts"]["cache_hits"] == 12


def test_an_empty_file_is_nothing_to_evaluate(serve, tmp_path):
    server = serve()
    (tmp_path / "q.jsonl").write_text("\n")
    result = invoke(*vqa_args(server, tmp_path / "q.jsonl", tmp_path / "run", "--scorer",
                              "choice"))
    assert result.exit_code == 2
    assert "nothing to evaluate: vqa q.jsonl has 0 rows in" in result.stderr
    assert server.stats.requests == 0 and not (tmp_path / "run").exists()
