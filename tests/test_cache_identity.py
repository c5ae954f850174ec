"""The response cache answers only for the model that gave the answers: keyed on what the
server says it serves (a checkpoint path, a digest), never on a model name alone. Real
loopback servers on 127.0.0.1, real runs through the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load

from visioneval.backends.served import from_model_list, from_ollama_tags

EXAMPLE = Path(__file__).parents[1] / "examples" / "vqa" / "questions.jsonl"


def vqa(server, out: Path, *extra: str, backend: str = "openai"):
    base = server.base_url + ("/v1" if backend == "openai" else "")
    return invoke("vqa", "--data", EXAMPLE, "--scorer", "choice", "--group-col", "category",
                  "--backend", backend, "--base-url", base, "--model", "m", "--out", out,
                  "--no-progress", "--no-report", *extra)


def accuracy(run: Path) -> float:
    return load(run)["overall"]["accuracy"]


def fixed(letter: str):
    return lambda prompt: letter


def test_two_servers_of_one_name_and_different_checkpoints_do_not_share(serve, tmp_path):
    first = serve(answer=fixed("A"), checkpoint="/ckpt/step-1000")
    second = serve(answer=fixed("B"), checkpoint="/ckpt/step-2000")
    a = vqa(first, tmp_path / "a")
    b = vqa(second, tmp_path / "b")
    assert a.exit_code == b.exit_code == 0, a.output + b.output
    assert second.stats.requests == 12  # nothing taken from the first server's answers
    assert load(tmp_path / "b", "run.json")["counts"]["cache_hits"] == 0
    assert {r["parsed"]["choice"] for r in journal(tmp_path / "b")} == {"B"}
    assert accuracy(tmp_path / "a") != accuracy(tmp_path / "b")
    identity = load(tmp_path / "b", "run.json")["backend"]["identity"]
    assert identity == {"backend": "openai", "model": "m", "served": {"root": "/ckpt/step-2000"}}


def test_a_new_checkpoint_behind_the_same_name_is_asked_again(serve, tmp_path):
    server = serve(answer=fixed("A"), checkpoint="/ckpt/step-1000")
    assert vqa(server, tmp_path / "old").exit_code == 0
    # The same URL and name, new weights: as vLLM reports them after a restart.
    server.script.checkpoint = "/ckpt/step-2000"
    server.script.answer = fixed("C")
    sent = server.stats.requests
    assert vqa(server, tmp_path / "new").exit_code == 0
    assert server.stats.requests - sent == 12
    assert {r["parsed"]["choice"] for r in journal(tmp_path / "new")} == {"C"}
    # The old weights again: their answers come back from the cache, named by their run.
    server.script.checkpoint = "/ckpt/step-1000"
    sent = server.stats.requests
    again = vqa(server, tmp_path / "again")
    assert again.exit_code == 0 and server.stats.requests == sent
    old_run = str((tmp_path / "old").resolve())
    assert f"cached answers: 12 from {old_run}" in again.stdout
    assert "checkpoint /ckpt/step-1000" in again.stdout
    assert load(tmp_path / "again", "run.json")["sessions"][-1]["cache_sources"] == {
        old_run: 12}
    assert {r["response"]["cached_from"] for r in journal(tmp_path / "again")} == {old_run}
    # The report says it too: what the server serves, and which run stored the answers.
    assert invoke("report", tmp_path / "again", "--thumbnails", "0").exit_code == 0
    page = (tmp_path / "again" / "report.html").read_text()
    assert "serves checkpoint /ckpt/step-1000" in page
    assert f"Answers from the response cache: 12 stored by {old_run}." in page


def test_a_resume_against_other_weights_is_refused(serve, tmp_path):
    server = serve(answer=fixed("A"), checkpoint="/ckpt/step-1000", fail_rate=0.5,
                   faults=("500",), seed=1)
    out = tmp_path / "run"
    assert vqa(server, out, "--max-attempts", "1").exit_code == 1
    server.script.checkpoint = "/ckpt/step-2000"
    server.script.fail_rate = 0.0
    sent = server.stats.requests
    result = invoke("vqa", "--resume", out, "--no-progress", "--base-url",
                    server.base_url + "/v1")
    assert result.exit_code == 2
    assert "now serves openai m (checkpoint /ckpt/step-2000), but this run started with openai m " \
           "(checkpoint /ckpt/step-1000)" in result.stderr
    assert server.stats.requests == sent


def test_a_server_that_says_nothing_is_keyed_by_its_url(serve, tmp_path):
    first = serve(answer=fixed("A"), checkpoint="")
    second = serve(answer=fixed("B"), checkpoint="")
    a = vqa(first, tmp_path / "a")
    assert a.exit_code == 0
    assert "does not say which checkpoint it serves" in a.stderr
    assert vqa(second, tmp_path / "b").exit_code == 0
    assert second.stats.requests == 12
    # The same URL again: its answers are reused (said in the note above).
    sent = first.stats.requests
    assert vqa(first, tmp_path / "a2").exit_code == 0 and first.stats.requests == sent
    assert load(tmp_path / "a2", "run.json")["backend"]["identity"]["base_url"] == \
        first.base_url + "/v1"


def test_ollama_digest_keys_the_cache(serve, tmp_path):
    server = serve(answer=fixed("A"), checkpoint="llava-pull-1")
    assert vqa(server, tmp_path / "a", backend="ollama").exit_code == 0
    served = load(tmp_path / "a", "run.json")["backend"]["identity"]["served"]
    assert list(served) == ["digest"] and len(served["digest"]) == 64
    server.script.checkpoint = "llava-pull-2"  # `ollama pull` of a newer build
    sent = server.stats.requests
    assert vqa(server, tmp_path / "b", backend="ollama").exit_code == 0
    assert server.stats.requests - sent == 12


def test_refresh_cache_sends_everything_and_replaces_entries(serve, tmp_path):
    server = serve(answer=fixed("A"))
    assert vqa(server, tmp_path / "a").exit_code == 0
    server.script.answer = fixed("B")  # the same checkpoint, answering differently now
    sent = server.stats.requests
    assert vqa(server, tmp_path / "b", "--refresh-cache").exit_code == 0
    assert server.stats.requests - sent == 12
    sent = server.stats.requests
    assert vqa(server, tmp_path / "c").exit_code == 0
    assert server.stats.requests == sent  # from the cache, which now holds "B"
    assert {r["parsed"]["choice"] for r in journal(tmp_path / "c")} == {"B"}
    # --no-cache neither reads nor writes.
    server.script.answer = fixed("C")
    assert vqa(server, tmp_path / "d", "--no-cache").exit_code == 0
    assert vqa(server, tmp_path / "e").exit_code == 0
    assert {r["parsed"]["choice"] for r in journal(tmp_path / "e")} == {"B"}
    assert vqa(server, tmp_path / "f", "--no-cache", "--refresh-cache").exit_code == 2


def test_cache_list_show_and_clear(serve, tmp_path):
    one = serve(answer=fixed("A"), checkpoint="/ckpt/one")
    two = serve(answer=fixed("B"), checkpoint="/ckpt/two")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert vqa(one, tmp_path / "a", *cache).exit_code == 0
    assert vqa(two, tmp_path / "b", *cache).exit_code == 0
    listed = invoke("cache", "list", *cache)
    assert listed.exit_code == 0
    text = flat(listed.stdout)
    assert "24 cached answers" in text and "checkpoint /ckpt/one" in text
    shown = invoke("cache", "show", "--run", tmp_path / "b", *cache)
    assert "12 cached answers" in flat(shown.stdout)
    assert "/ckpt/one" not in shown.stdout
    assert invoke("cache", "clear", *cache).exit_code == 2  # says what to clear
    cleared = invoke("cache", "clear", "--run", tmp_path / "a", *cache)
    assert "removed 12 cached answers" in cleared.stdout
    sent = one.stats.requests
    assert vqa(one, tmp_path / "a2", *cache).exit_code == 0
    assert one.stats.requests - sent == 12  # asked again
    assert "removed 24" in invoke("cache", "clear", "--all", *cache).stdout
    assert "no response cache" in invoke("cache", "list", "--cache-dir",
                                         tmp_path / "none").stdout


@pytest.mark.parametrize(("body", "url", "served"), [
    # vLLM: `root` is the checkpoint; `created` is the server's start time, not kept.
    ({"data": [{"id": "m", "root": "/models/qwen-ft", "created": 1732000000,
                "owned_by": "vllm"}]}, "http://gpu:8000/v1", {"root": "/models/qwen-ft"}),
    # A LoRA adapter on vLLM: the adapter and its base.
    ({"data": [{"id": "m", "root": "/lora/a", "parent": "Qwen/Qwen2-VL-7B"}]},
     "http://gpu:8000/v1", {"root": "/lora/a", "parent": "Qwen/Qwen2-VL-7B"}),
    # OpenRouter names the dated model behind an alias.
    ({"data": [{"id": "openai/gpt-4o", "canonical_slug": "openai/gpt-4o-2024-08-06",
                "created": 1715367049}]}, "https://openrouter.ai/api/v1",
     {"canonical_slug": "openai/gpt-4o-2024-08-06", "host": "openrouter.ai",
      "created": 1715367049}),
    # OpenAI: the host and the listing's date.
    ({"data": [{"id": "gpt-4o", "created": 1715367049, "owned_by": "system"}]},
     "https://api.openai.com/v1", {"host": "api.openai.com", "created": 1715367049}),
    # LM Studio or a proxy: nothing that names weights.
    ({"data": [{"id": "m", "owned_by": "organization_owner"}]}, "http://localhost:1234/v1",
     None),
])
def test_what_each_server_says_it_serves(body, url, served):
    model = body["data"][0]["id"]
    assert from_model_list(body, model, url) == served


def test_ollama_tags_digest():
    tags = {"models": [{"name": "llava:7b", "digest": "abc123"},
                       {"name": "llava:latest", "digest": "def456"}]}
    assert from_ollama_tags(tags, "llava:7b") == {"digest": "abc123"}
    assert from_ollama_tags(tags, "llava") == {"digest": "def456"}
    assert from_ollama_tags(tags, "other") is None
