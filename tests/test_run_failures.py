"""How a run ends when requests fail: a rejected key stops it early with one line, the
console names the most common reasons, and -v traces every request."""

from __future__ import annotations

import re

from cli_helpers import invoke, journal, load, salbench_args

from visioneval.loopback.server import Reply


def reject(protocol, body, prompt):
    return Reply({"error": {"message": "Incorrect API key provided"}}, status=401)


def test_rejected_key_stops_the_run_after_a_few_requests(serve, synth_data, tmp_path,
                                                          monkeypatch):
    secret = "sk-wrong-8c1e77"
    monkeypatch.setenv("MY_KEY", secret)
    server = serve(reply=reject)  # the model list answers: preflight passes, chat does not
    out = tmp_path / "run"
    args = salbench_args(server, synth_data, out, "--splits", "synthetic", "--tasks",
                         "D,R,VR", "--api-key-env", "MY_KEY", "--concurrency", "2")
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert server.stats.requests <= 5  # not all 24
    lines = [line for line in result.stderr.splitlines() if "$MY_KEY" in line]
    assert len(lines) == 1 and "401" in lines[0], result.stderr
    assert secret not in result.output
    assert "--resume" in result.stderr
    recorded = journal(out)
    assert len(recorded) <= 5 and all(r["response"]["error"] for r in recorded)
    assert load(out, "run.json")["counts"]["records"] == len(recorded)
    # The samples never sent are simply not recorded: fixing the key and resuming finishes.
    server.script.reply = None
    result = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                    server.base_url + "/v1", "--api-key-env", "MY_KEY")
    assert result.exit_code == 0, result.output
    assert len({r["id"] for r in journal(out)}) == 24


def test_console_names_the_most_common_error_reasons(serve, synth_data, tmp_path):
    calls = []

    def flaky(protocol, body, prompt):
        calls.append(1)
        if len(calls) % 3 == 0:
            return Reply({"error": {"message": "bad gateway"}}, status=502)
        return Reply({"error": {"message": "internal error", "request_id": f"req_{len(calls)}"
                                f"{'ab12' * 4}"}}, status=500)

    server = serve(reply=flaky)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                   "--max-attempts", "2", "--concurrency", "1"))
    assert result.exit_code == 1
    counts = {m.group(2): int(m.group(1))
              for m in re.finditer(r"^\s+(\d+) x (.+)$", result.stderr, re.M)}
    assert sum(counts.values()) == 8, result.stderr
    assert len(counts) == 2 and all("HTTP 50" in reason for reason in counts), counts
    assert "req_" not in result.stderr.split("most common")[1]


def test_error_reasons_group_variants():
    from visioneval.engine.retry import error_reason

    a = error_reason("gave up after 6 attempt(s): HTTP 500: {\"id\": \"req_8f3a9c21e4b7\"}")
    b = error_reason("gave up after 2 attempt(s): HTTP 500: {\"id\": \"req_77aa00bb11cc\"}")
    assert a == b and a.startswith("HTTP 500")
    assert error_reason("failed after 1 attempt(s): HTTP 404: no model") == "HTTP 404: no model"
    assert error_reason("x" * 1000) == "x" * 120 + "..."


def test_verbose_traces_each_request_start_and_end(serve, synth_data, tmp_path):
    server = serve(fail_first=1, faults=("500",))
    result = invoke(*salbench_args(server, synth_data, tmp_path / "run", "--configs", "P3",
                                   "-v", "--no-cache"))
    assert result.exit_code == 0, result.output
    sent = re.findall(r"request (\w{8}) attempt (\d) sent", result.stderr)
    ended = re.findall(r"request (\w{8}) attempt (\d) (ok|failed)[^\n]* in \d+\.\d+ s",
                       result.stderr)
    assert len(sent) == 9 and len(ended) == 9, result.stderr
    assert {tag for tag, _ in sent} == {tag for tag, _, _ in ended}
    assert [o for _, _, o in ended].count("failed") == 1
    quiet = invoke(*salbench_args(server, synth_data, tmp_path / "quiet", "--configs", "P3",
                                  "--no-cache"))
    assert "attempt" not in quiet.stderr
