"""The per-attempt timeout measures the server: it starts when the request is on the wire,
never while the request waits for a connection slot or a rate-limit token."""

from __future__ import annotations

import pytest
import yaml
from cli_helpers import invoke, load

from visioneval.loopback.server import answer_judge


@pytest.mark.parametrize("n_cases, latency_s", [
    pytest.param(2, 0.2, id="2 cases"),
    pytest.param(4, 0.3, id="4 cases", marks=pytest.mark.slow)])
@pytest.mark.slow
def test_judge_samples_beyond_concurrency_never_time_out_waiting(serve, tmp_path, n_cases,
                                                                 latency_s):
    # 4 cases x 4 judge samples at 2 in flight: 16 requests queue for 2 slots, 0.3 s each.
    # Each attempt takes 0.3 s on the wire against a 0.9 s timeout; a timeout that counted
    # the queue would expire for the later ones (they wait 0.6 s and more). With 2 cases
    # at 0.2 s (0.6 s timeout), the last two requests wait 0.6 s.
    server = serve(answer=answer_judge, latency_s=latency_s)
    cases = tmp_path / "cases.yaml"
    cases.write_text(yaml.safe_dump([
        {"id": f"c{i}", "input": "Describe the picture.", "output": f"A cat, number {i}.",
         "evaluators": [{"judge": "image-description"}]} for i in range(n_cases)]))
    out = tmp_path / "run"
    result = invoke("evaluate", cases, "--judge-backend", "openai", "--judge-model", "m",
                    "--judge-base-url", server.base_url + "/v1", "--judge-samples", "4",
                    "--concurrency", "2", "--timeout", f"{3 * latency_s:g}", "--max-attempts",
                    "1", "--out", out, "--no-progress", "--no-report", "--no-cache")
    assert result.exit_code == 0, result.output
    assert server.stats.requests == 4 * n_cases
    info = load(out, "run.json")
    assert info["counts"]["errors"] == 0 and info["counts"]["scored"] == n_cases
    block = load(out)["evaluators"]["judge:image-description"]
    assert block["errors"] == 0 and block["processed"] == n_cases
