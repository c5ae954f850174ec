"""Suites sized like a lab's: a model's runs through its provider's batch API
(`batch = true`), runs that stop once the answer is known (`target_ci`), and the power beside
the cost in the suite's dry run (against the loopback server's batch emulation)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal

from visioneval.benchmarks.salbench.synth import write_synthetic
from visioneval.loopback.batches import BatchScript


def _suite(path: Path, base_url: str, data: Path, model: str = "", bench: str = "") -> Path:
    path.write_text(f'''name = "t"
[[models]]
name = "lb"
backend = "openai"
model = "m"
base_url = "{base_url}/v1"
price_in = 2
price_out = 8
concurrency = 2
{model}
[[benchmarks]]
name = "salbench"
options = {{ data_dir = "{data}", splits = ["synthetic"] }}
{bench}
[engine]
no_cache = true
''')
    return path


def _run(file: Path, out: Path, *extra: str):
    return invoke("suite", file, "--out", out, "--no-progress", *extra)


def _info(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())


@pytest.fixture(scope="module")
def many_rows(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("salbench-suite")
    write_synthetic(root, 40, seed=3)  # 120 samples over three configs
    return root


@pytest.mark.slow
def test_a_batch_model_sends_each_run_in_batches_at_the_batch_price(serve, synth_data,
                                                                    tmp_path):
    server = serve(batches=BatchScript(delay_s=0.1))
    file = _suite(tmp_path / "s.toml", server.base_url, synth_data, "batch = true",
                  "vary = { shots = [0, 3] }")
    dry = _run(file, tmp_path / "out", "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert "2 runs, 2 at a time" in flat(dry.stdout)  # submitted side by side
    assert "through the provider's batch API" in dry.stdout
    assert server.stats.requests == 0
    result = _run(file, tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    for shots in (0, 3):
        run = tmp_path / "out" / f"salbench-shots{shots}" / "lb"
        info = _info(run)
        assert [b["status"] for b in info["batch"]["batches"]] == ["collected"]
        assert info["batch"]["discount"] == 0.5
        assert "batch API's 50%" in info["counts"]["cost"]["source"]
        assert len(journal(run)) == 24
    assert server.batch_apis.book.batches == 2


def test_a_run_stops_at_its_target_interval_and_a_narrower_one_extends_it(serve, many_rows,
                                                                        tmp_path):
    server = serve()
    file = _suite(tmp_path / "s.toml", server.base_url, many_rows,
                  bench="target_ci = 45\nmin_samples = 20")
    out = tmp_path / "out"
    first = _run(file, out)
    assert first.exit_code == 0, first.stderr
    run = out / "salbench" / "lb"
    rule = _info(run)["stopping"]
    assert rule["stopped"] and rule["target_ci"] == 45 and rule["n"] < 120
    text = flat(first.stdout)
    assert f"stopped at its target interval: {rule['n']} of 120 samples" in text
    sent = server.stats.requests
    assert "done before" in _run(file, out).stdout and server.stats.requests == sent
    file.write_text(file.read_text().replace("target_ci = 45", "target_ci = 25"))
    narrower = _run(file, out)
    assert narrower.exit_code == 0, narrower.stderr
    extended = _info(run)["stopping"]
    assert extended["target_ci"] == 25 and extended["n"] > rule["n"]
    assert extended["segments"][0] == [0, 45.0]


def test_the_dry_run_prints_the_detectable_difference_beside_the_cost(serve, synth_data,
                                                                      tmp_path):
    server = serve()
    file = _suite(tmp_path / "s.toml", server.base_url, synth_data)
    dry = _run(file, tmp_path / "out", "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    from visioneval.stats.power import detectable_paired

    expected = 100 * detectable_paired(24, 0.5)
    assert f"±{expected:.1f}" in dry.stdout
    assert "detects: the paired difference" in dry.stdout
    assert all(len(line) <= 80 for line in dry.stdout.splitlines()[:6])


@pytest.mark.parametrize(("model", "bench", "message"), [
    ("batch = true", "target_ci = 3", "use one or the other"),
    ("", "min_samples = 10", "min_samples goes with target_ci"),
    ("", 'target_ci = 3\nvariants = ["blind"]', "variants in a benchmark entry of their own"),
    ("", "target_ci = 0", "benchmarks[1].target_ci"),
])
def test_what_cannot_go_together_is_one_line_naming_the_file(synth_data, tmp_path, model,
                                                             bench, message):
    file = _suite(tmp_path / "s.toml", "http://127.0.0.1:9", synth_data, model, bench)
    result = _run(file, tmp_path / "out")
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert str(file) in lines[0] and message in lines[0], lines[0]
    assert not (tmp_path / "out").exists()


def test_a_backend_without_a_batch_api_is_refused_by_name(synth_data, tmp_path):
    file = _suite(tmp_path / "s.toml", "http://127.0.0.1:9", synth_data, "batch = true")
    file.write_text(file.read_text().replace('backend = "openai"', 'backend = "ollama"'))
    result = _run(file, tmp_path / "out")
    assert result.exit_code == 2
    assert "model lb: batch = true: the ollama backend has no batch API" in \
        flat(result.stderr)
