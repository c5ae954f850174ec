"""The per-attempt timeout measures the server: it starts when the request is on the wire,
never while the request waits for a connection slot or a rate-limit token."""

from __future__ import annotations

import pytest
import yaml
from cli_helpers import invoke, load

from visioneval.loopback.server import answer_judge


@pytest.mark.slow
def test_judge_samples_beyond_concurrency_never_time_out_waiting(serve, tmp_path):
    # 4 cases x 4 judge samples at 2 in flight: 16 requests queue for 2 slots, 0.3 s each.
    # Each attempt takes 0.3 s on the wire against a 0.9 s timeout; a timeout that counted
    # the queue would expire for the later ones (they wait 0.6 s and more).
    server = serve(answer=answer_judge, latency_s=0.3)
    cases = tmp_path / "cases.yaml"
    cases.write_text(yaml.safe_dump([
        {"id": f"c{i}", "input": "Describe the picture.", "output": f"A cat, number {i}.",
         "evaluators": [{"judge": "image-description"}]} for i in range(4)]))
    out = tmp_path / "run"
    result = invoke("evaluate", cases, "--judge-backend", "openai", "--judge-model", "m",
                    "--judge-base-url", server.base_url + "/v1", "--judge-samples", "4",
                    "--concurrency", "2", "--timeout", "0.9", "--max-attempts", "1",
                    "--out", out, "--no-progress", "--no-report", "--no-cache")
    assert result.exit_code == 0, result.output
    assert server.stats.requests == 16
    info = load(out, "run.json")
    assert info["counts"]["errors"] == 0 and info["counts"]["scored"] == 4
    block = load(out)["evaluators"]["judge:image-description"]
    assert block["errors"] == 0 and block["processed"] == 4
