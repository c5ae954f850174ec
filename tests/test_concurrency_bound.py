"""--concurrency asks for requests in flight, not for memory: the engine starts no more
workers than samples it sends, and a value beyond MAX_CONCURRENCY per URL is refused in
one line wherever it is given (flags, suite files, the Python API, the probe)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from cli_helpers import invoke

import visioneval
from visioneval.backends.openai import OpenAIBackend
from visioneval.core import defaults
from visioneval.core.records import GenerationSettings, Sample, user
from visioneval.core.runfiles import BackendInfo, RunInfo
from visioneval.core.store import RunStore
from visioneval.engine.options import EngineOptions
from visioneval.engine.progress import RunProgress
from visioneval.engine.retry import RetryPolicy
from visioneval.engine.runner import Engine, RunStats

VQA = Path(__file__).parent.parent / "examples" / "vqa" / "questions.jsonl"
POLICY = RetryPolicy(max_attempts=2, timeout_s=10.0, backoff_base_s=0.0, backoff_cap_s=0.0)


def test_the_engine_starts_no_more_workers_than_samples(serve, tmp_path):
    server = serve(models=("m",))
    backend = OpenAIBackend("m", server.base_url + "/v1", api_key=None, api_key_env=None)
    store = RunStore.create(tmp_path / "run", RunInfo(
        benchmark="vqa", backend=BackendInfo(kind="openai", model="m")))
    engine = Engine(backend, store, GenerationSettings(), POLICY,
                    concurrency=defaults.MAX_CONCURRENCY)
    samples = [Sample(id=f"s{i}", group="g", messages=(user(f"q {i}"),), target=None)
               for i in range(12)]
    tasks: list[int] = []

    def scorer(sample, text):
        tasks.append(len(asyncio.all_tasks()))
        return {"text": text}, {"m": {"x": 1.0}}

    async def go():
        async with backend:
            with RunProgress(12, "t", enabled=False) as progress:
                return await engine.run(samples, scorer, progress, set(), RunStats())

    stats = asyncio.run(go())
    store.close()
    assert stats.finished == 12 and stats.errors == 0
    # 12 workers at most, beside the producer, the writer and the run itself.
    assert max(tasks) <= 12 + 8, max(tasks)


def test_a_concurrency_beyond_the_bound_is_refused_on_the_command_line(tmp_path):
    out = ["--out", tmp_path / "x"]
    for command in (["run", "vqa", "-o", f"data={VQA}", "--backend", "builtin",
                     "--model", "random", *out],
                    ["suite", "--benchmarks", "vqa", "--backend", "builtin", "--model",
                     "random", *out],
                    ["probe", "resolution", "--backend", "builtin", "--model", "random"]):
        result = invoke(*command, "--concurrency", "1000000")
        assert result.exit_code == 2, (command, result.output)
        assert str(defaults.MAX_CONCURRENCY) in result.stderr
    assert not (tmp_path / "x").exists()
    shards = invoke("run", "vqa", "-o", f"data={VQA}", "--backend", "builtin", "--model",
                    "random", "--executor", "ray", "--shards", "100000000000")
    assert shards.exit_code == 2 and "at most 4096" in shards.stderr


@pytest.mark.parametrize("where", ["model", "engine"])
def test_a_concurrency_beyond_the_bound_is_refused_in_a_suite_file(tmp_path, where):
    model = "concurrency = 9223372036854775807" if where == "model" else ""
    engine = "[engine]\nconcurrency = 9223372036854775807" if where == "engine" else ""
    file = tmp_path / "s.toml"
    file.write_text(f'''[[models]]
backend = "builtin"
model = "random"
{model}
[[benchmarks]]
name = "vqa"
options = {{ data = "{VQA}", scorer = "choice" }}
{engine}
''')
    result = invoke("suite", file, "--out", tmp_path / "out", "--no-progress")
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    key = "models[1].concurrency" if where == "model" else "engine.concurrency"
    assert f"{file}: {key}" in lines[0] and "4096" in lines[0]
    assert not (tmp_path / "out").exists()


def test_the_python_api_refuses_a_concurrency_beyond_the_bound(tmp_path):
    with pytest.raises(ValueError, match="at most 4096 requests in flight per URL"):
        visioneval.run("vqa", model="random", backend="builtin", out=tmp_path / "r",
                       options={"data": str(VQA), "scorer": "choice"},
                       engine=EngineOptions(concurrency=1_000_000))
    assert not (tmp_path / "r").exists()
    # At the bound, a run of 12 samples runs as any other.
    result = visioneval.run("vqa", model="random", backend="builtin", out=tmp_path / "ok",
                            options={"data": str(VQA), "scorer": "choice"}, report=False,
                            engine=EngineOptions(concurrency=defaults.MAX_CONCURRENCY,
                                                 cache_path=None))
    assert (result.n_records, result.n_errors) == (12, 0)
