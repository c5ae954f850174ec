"""`--resume` continues with every setting the run recorded; a flag given again replaces its
recorded value with a printed line; a flag that would change what is measured is refused;
and a run directory alone never names a server that gets the images or a key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load, salbench_args


def first_run(server, synth_data: Path, out: Path, *extra: str):
    """A run that leaves failed samples behind (one attempt each, every third fails)."""
    return invoke(*salbench_args(server, synth_data, out, "--splits", "synthetic",
                                 "--max-attempts", "1", *extra))


@pytest.mark.slow
def test_resume_keeps_concurrency_and_no_cache(serve, synth_data, tmp_path):
    cache = tmp_path / "cache"
    server = serve(latency_s=0.05)
    # The cache holds every answer (an earlier run) ...
    assert invoke(*salbench_args(server, synth_data, tmp_path / "warm", "--splits",
                                 "synthetic", "--cache-dir", cache)).exit_code == 0
    # ... a run at 2 in flight that reads no cache, with failures to retry.
    server.script.fail_rate, server.script.faults = 0.4, ("500",)
    server.script.max_in_flight = 2  # the server's own limit: a third request gets a 429
    out = tmp_path / "run"
    result = first_run(server, synth_data, out, "--concurrency", "2", "--no-cache")
    assert result.exit_code == 1, result.output
    failed = {r["id"] for r in journal(out) if r["response"]["error"]}
    assert failed
    server.script.fail_rate = 0.0
    server.stats.most_in_flight = server.stats.over_limit = 0
    sent = server.stats.requests
    resumed = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                     server.base_url + "/v1", "--cache-dir", cache, "--no-cache")
    # --cache-dir with --no-cache is refused in one line; without them, the record rules.
    assert resumed.exit_code == 2 and "--no-cache neither reads" in resumed.stderr
    resumed = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                     server.base_url + "/v1")
    assert resumed.exit_code == 0, resumed.output
    assert "replaces" not in resumed.stderr
    assert server.stats.most_in_flight <= 2 and server.stats.over_limit == 0
    assert server.stats.requests - sent == len(failed)
    info = load(out, "run.json")
    assert info["sessions"][-1]["cache_hits"] == 0 and info["engine"]["cache_path"] is None
    assert info["engine"]["concurrency"] == 2 and info["engine"]["max_attempts"] == 1


def test_a_flag_given_again_replaces_the_recorded_value_and_says_so(serve, synth_data,
                                                                    tmp_path):
    server = serve(fail_rate=0.4, faults=("500",), seed=3)
    out = tmp_path / "run"
    assert first_run(server, synth_data, out, "--concurrency", "2",
                     "--no-cache").exit_code == 1
    server.script.fail_rate = 0.0
    resumed = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                     server.base_url + "/v1", "--concurrency", "4", "--timeout", "30")
    assert resumed.exit_code == 0, resumed.output
    assert "--concurrency: 4 replaces the run's recorded 2" in resumed.stderr
    assert "--timeout: 30.0 replaces the run's recorded 120.0" in resumed.stderr
    info = load(out, "run.json")
    assert info["sessions"][-1]["engine_changes"] == {"concurrency": [2, 4],
                                                      "timeout_s": [120.0, 30.0]}
    assert info["engine"]["concurrency"] == 4  # the next resume continues at 4
    assert info["engine"]["max_attempts"] == 1 and info["engine"]["cache_path"] is None


def test_flags_that_change_what_is_measured_are_refused(serve, synth_data, tmp_path):
    server = serve()
    out = tmp_path / "run"
    assert invoke(*salbench_args(server, synth_data, out, "--configs", "P3")).exit_code == 0
    url = ("--base-url", server.base_url + "/v1")
    sent = server.stats.requests
    for extra, said in [(("--model", "other"), "--model: the run recorded m, given other"),
                        (("--temperature", "0.7"), "--temperature: the run recorded 0.0, "
                         "given 0.7"),
                        (("--max-tokens", "9"), "--max-tokens: the run recorded 128, given 9"),
                        (("--configs", "O3"), "--configs: the run recorded P3, given O3"),
                        (("--shots", "3"), "--shots: the run recorded 0, given 3"),
                        (("--splits", "natural"), "--splits: the run recorded configs P3, "
                         "given configs O3,O3_box,O3_box_img"),
                        (("--batch",), "--batch: the run was sent request by request")]:
        result = invoke("salbench", "--resume", out, "--no-progress", *url, *extra)
        assert result.exit_code == 2, (extra, result.output)
        lines = result.stderr.strip().splitlines()
        assert lines[0].startswith(f"error: {said}"), (extra, lines)
        assert len(lines) == 2 and "a change is a new run (--out DIR)" in lines[1]
    # Several changes: one line each, then what to do.
    result = invoke("salbench", "--resume", out, "--no-progress", *url, "--model", "x",
                    "--num-samples", "3", "--data-dir", tmp_path, "--out", tmp_path / "other")
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 5, lines
    assert lines[1] == "--out: the run is in " f"{out}, given {tmp_path / 'other'}; --resume " \
        "continues the run where it is"
    assert lines[2:4] == [f"--data-dir: the run recorded {synth_data.resolve()}, given "
                          f"{tmp_path.resolve()}", "--num-samples: the run recorded none, given 3"]
    assert server.stats.requests == sent


def test_the_same_command_line_with_resume_for_out_continues_the_run(
        serve, synth_data, tmp_path, monkeypatch):
    """What a user types: the first command again, --out replaced by --resume; values are
    compared as the run recorded them (a relative path, --splits/--tasks as configs)."""
    server = serve(fail_rate=0.4, faults=("500",), seed=3)
    monkeypatch.chdir(synth_data.parent)
    first = ["salbench", "--backend", "openai", "--base-url", server.base_url + "/v1",
             "--model", "m", "--data-dir", synth_data.name, "--splits", "synthetic",
             "--tasks", "D,R", "--num-samples", "4", "--temperature", "0", "--max-attempts",
             "1", "--no-progress", "--no-cache"]
    out = tmp_path / "run"
    assert invoke(*first, "--out", out).exit_code == 1
    failed = {r["id"] for r in journal(out) if r["response"]["error"]}
    assert failed
    server.script.fail_rate = 0.0
    sent = server.stats.requests
    resumed = invoke(*first, "--resume", out, "--max-attempts", "2")
    assert resumed.exit_code == 0, resumed.output
    assert "--max-attempts: 2 replaces the run's recorded 1" in resumed.stderr
    assert server.stats.requests - sent == len(failed)
    # The same configs named another way are the same run; another model is not.
    named = [a for a in first if a not in ("--splits", "synthetic", "--tasks", "D,R")]
    same = invoke(*named, "--configs", "P3,P3_box", "--resume", out)
    assert same.exit_code == 0, same.output
    other = invoke(*first, "--resume", out, "--tasks", "D")
    assert other.exit_code == 2 and "--tasks: the run recorded configs P3,P3_box, given " \
        "configs P3" in other.stderr


def test_a_run_directory_never_sends_a_key_or_images_to_a_server_it_names(
        serve, synth_data, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-secret-5c2f")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-77d1")
    server = serve()
    out = tmp_path / "run"
    assert first_run(server, synth_data, out, "--api-key-env", "MY_KEY").exit_code in (0, 1)
    # Someone edits run.json (or hands over a run directory) to name their own server.
    capture = serve()
    info = load(out, "run.json")
    info["backend"] |= {"base_url": capture.base_url + "/v1",
                        "base_urls": [capture.base_url + "/v1"]}
    (out / "run.json").write_text(json.dumps(info))
    (out / "samples.jsonl").write_text("")  # every sample is left to send
    for extra in [(), ("--api-key-env", "MY_KEY"), ("--concurrency", "2")]:
        result = invoke("salbench", "--resume", out, "--no-progress", *extra)
        assert result.exit_code == 2, result.output
        assert f"--base-url {capture.base_url}/v1 --api-key-env MY_KEY" in result.stderr
    assert capture.stats.requests == 0 and not capture.stats.seen_auth
    # Named on the command line, it is the user's choice: the run goes there.
    named = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                   capture.base_url + "/v1", "--api-key-env", "MY_KEY")
    assert named.exit_code == 0, named.output
    assert capture.stats.seen_auth == {"sk-secret-5c2f"}


def test_a_hosted_api_recorded_with_a_key_variable_needs_both_named(serve, synth_data,
                                                                     tmp_path, monkeypatch):
    """run.json may name a hosted API, but not which of the user's variables goes there."""
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    server = serve()
    out = tmp_path / "run"
    assert first_run(server, synth_data, out).exit_code in (0, 1)
    info = load(out, "run.json")
    info["backend"] |= {"base_url": "https://api.openai.com/v1",
                        "base_urls": ["https://api.openai.com/v1"],
                        "api_key_env": "AWS_SECRET_ACCESS_KEY"}
    (out / "run.json").write_text(json.dumps(info))
    result = invoke("salbench", "--resume", out, "--no-progress")
    assert result.exit_code == 2
    assert "--base-url https://api.openai.com/v1 --api-key-env AWS_SECRET_ACCESS_KEY" \
        in result.stderr


def test_the_hint_to_continue_names_the_server_again(serve, synth_data, tmp_path):
    server = serve(fail_rate=0.5, faults=("500",), seed=4)
    out = tmp_path / "run"
    result = first_run(server, synth_data, out)
    assert result.exit_code == 1
    hint = f"visioneval salbench --resume {out} --base-url {server.base_url}/v1"
    assert hint in flat(result.stderr)


def _cut(run: Path, keep: int) -> int:
    """The run as if killed after `keep` samples: the number of samples it had."""
    lines = (run / "samples.jsonl").read_text().splitlines(keepends=True)
    (run / "samples.jsonl").write_text("".join(lines[:keep]))
    return len(lines)


@pytest.mark.slow
def test_vqa_own_benchmark_and_suite_runs_resume_from_their_command_lines(tmp_path,
                                                                          synth_data):
    examples = Path(__file__).parents[1] / "examples"
    vqa = ["vqa", "--data", examples / "vqa" / "questions.jsonl", "--scorer", "choice",
           "--group-col", "category", "--backend", "builtin", "--model", "random",
           "--no-progress", "--no-report"]
    own = ["run", f"{examples / 'own_benchmark' / 'colours.py'}:ColoursDefinition",
           "--backend", "builtin", "--model", "random", "-o", "n=9", "--no-progress",
           "--no-report"]
    for command, changed, said in [
            (vqa, ("--scorer", "exact"), "--scorer: the run recorded choice, given exact"),
            (own, ("-o", "n=8"), "--option n: the run recorded 9, given 8")]:
        out = tmp_path / command[0]
        assert invoke(*command, "--out", out).exit_code == 0
        total = _cut(out, 3)
        resumed = invoke(*command, "--resume", out)
        assert resumed.exit_code == 0, resumed.output
        assert len(journal(out)) == total and "3 done before" in resumed.stdout
        refused = invoke(*command, "--resume", out, *changed)
        assert refused.exit_code == 2 and said in refused.stderr, refused.stderr
    # A run a suite made is an ordinary run directory: its benchmark's command resumes it.
    suite = tmp_path / "suite"
    made = invoke("suite", "--benchmarks", "salbench", "--backend", "builtin", "--model",
                  "popout", "-o", f"salbench.data_dir={synth_data}", "-o",
                  "salbench.splits=synthetic", "--out", suite, "--no-progress")
    assert made.exit_code == 0, made.output
    [run] = [p.parent for p in suite.rglob("run.json")]
    total = _cut(run, 2)
    resumed = invoke("salbench", "--backend", "builtin", "--model", "popout", "--data-dir",
                     synth_data, "--splits", "synthetic", "--resume", run, "--no-progress",
                     "--no-report")
    assert resumed.exit_code == 0, resumed.output
    assert len(journal(run)) == total
