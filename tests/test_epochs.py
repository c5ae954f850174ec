"""`--epochs K`: every sample asked K times against real loopback servers, the first answers
feeding the benchmark's tables and the item means and variance split beside them; cached,
resumed, sharded and merged, batched and in a suite as a run of one epoch is."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import flat, invoke, journal, load

from visioneval.loopback.batches import BatchScript
from visioneval.loopback.varying import answer_varying, between_within
from visioneval.stats.variance_split import split

ROOT = Path(__file__).parent.parent
KNOWN = f"{ROOT / 'examples' / 'epochs' / 'known_items.py'}:KnownItemsDefinition"
VQA = ROOT / "examples" / "vqa" / "questions.jsonl"


def _known(server, out: Path, *extra: str, items: int = 60, epochs: int = 3):
    result = invoke("run", KNOWN, "-o", f"items={items}", "--epochs", str(epochs),
                    "--backend", "openai", "--model", "m", "--base-url",
                    f"{server.base_url}/v1", "--out", out, "--no-progress", "--no-report",
                    "--price-in", "0", "--price-out", "0", "--backoff-base", "0.01",
                    "--backoff-cap", "0.05", *extra)
    return result



@pytest.mark.slow
def test_the_split_recovers_a_model_of_known_answer_variation(serve, tmp_path):
    a, b = 2.0, 1.0
    server = serve(answer=answer_varying(a, b, seed=7), seed=7)
    run = tmp_path / "run"
    result = _known(server, run, "--no-cache", items=300, epochs=4)
    assert result.exit_code == 0, result.stderr
    records = journal(run)
    assert len(records) == 1200 and server.stats.answered == 1200
    # The first answer keeps the item's id; answer k is <id>@epoch<k> with its epoch.
    ids = {r["id"] for r in records}
    assert "item00000" in ids and "item00000@epoch4" in ids
    assert next(r for r in records if r["id"] == "item00000@epoch3")["metadata"]["epoch"] == 3
    # The benchmark's tables read the first answers only.
    assert load(run)["overall"]["n"] == 300
    summary = load(run, "epochs.json")
    between, within = between_within(a, b)
    found = summary["split"]
    low, high = found["between"]["ci95"]
    assert low <= between <= high
    low, high = found["within"]["ci95"]
    assert low <= within <= high
    assert summary["item_means"]["n"] == 300 and summary["answers"] == 1200
    low, high = summary["item_means"]["ci95"]
    assert low <= a / (a + b) <= high
    # Averaging four answers narrows the interval the first answers alone give.
    first = summary["first_answers"]["ci95"]
    assert high - low < first[1] - first[0]
    text = flat(result.stdout)
    assert "Repeated answers: 4 answers to each of 300 items" in text
    assert "answer variation is" in text and "more items narrow the interval" in text
    assert all(len(line) <= 100 for line in result.stdout.splitlines())


def test_the_split_equals_the_moment_estimates_of_the_answers():
    rng = np.random.default_rng(3)
    chances = rng.beta(1.0, 1.0, 40)
    answers = (rng.random((40, 5)) < chances[:, None]).astype(float)
    found = split(answers.sum(1), (answers ** 2).sum(1), np.full(40, 5))
    assert found is not None
    within = answers.var(axis=1, ddof=1).mean()
    between = answers.mean(axis=1).var(ddof=1) - within / 5
    assert found.within.value == pytest.approx(within)
    assert found.between.value == pytest.approx(between)
    assert found.within_share.value == pytest.approx((within / 5) / (between + within / 5))


def test_a_model_that_answers_alike_every_time_has_no_answer_variation(serve, tmp_path):
    server = serve()  # the checksum model: the same answer to the same prompt, any seed
    run = tmp_path / "run"
    assert _known(server, run, "--no-cache", items=40, epochs=3).exit_code == 0
    found = load(run, "epochs.json")["split"]
    assert found["within"]["value"] == 0.0 and found["within_share"]["value"] == 0.0


def test_each_epoch_is_its_own_request_and_cache_entry(serve, tmp_path):
    server = serve(answer=answer_varying(1.0, 1.0, seed=1), seed=1)
    cache = tmp_path / "cache"
    first = _known(server, tmp_path / "two", "--cache-dir", cache, items=30, epochs=2)
    assert first.exit_code == 0, first.stderr
    assert server.stats.answered == 60
    # A larger K sends only the new answers; the cached ones are replayed as they were.
    again = _known(server, tmp_path / "three", "--cache-dir", cache, items=30, epochs=3)
    assert again.exit_code == 0, again.stderr
    assert server.stats.answered == 90
    two = {r["id"]: r["response"]["text"] for r in journal(tmp_path / "two")}
    three = {r["id"]: r["response"]["text"] for r in journal(tmp_path / "three")}
    assert all(three[k] == v for k, v in two.items())
    assert json.loads((tmp_path / "three" / "run.json").read_text())["epochs"] == 3


def test_a_failed_answer_is_an_error_and_resume_sends_only_it(serve, tmp_path):
    server = serve(answer=answer_varying(2.0, 2.0, seed=2), seed=2, fail_first=7,
                   faults=("500",))
    run = tmp_path / "run"
    result = _known(server, run, "--no-cache", "--max-attempts", "1", items=20, epochs=3)
    assert result.exit_code == 1
    summary = load(run, "epochs.json")
    assert summary["errors"] == 7 and summary["answers"] == 53
    resumed = invoke("run", KNOWN, "--resume", run, "--base-url", f"{server.base_url}/v1",
                     "--no-progress", "--no-report")
    assert resumed.exit_code == 0, resumed.stderr
    assert server.stats.answered == 60
    summary = load(run, "epochs.json")
    assert summary["errors"] == 0 and summary["answers"] == 60
    # Under 40 items the split's intervals are said to be too short.
    assert summary["split"]["few_items"].startswith("only 20 items with two answers")
    refused = invoke("run", KNOWN, "--resume", run, "--epochs", "4", "--base-url",
                     f"{server.base_url}/v1", "--no-progress", "--no-report")
    assert refused.exit_code != 0 and "--epochs" in flat(refused.stderr)


@pytest.mark.slow
def test_shards_merge_to_the_whole_runs_split(serve, tmp_path):
    server = serve(answer=answer_varying(2.0, 1.0, seed=4), seed=4)
    whole = tmp_path / "whole"
    assert _known(server, whole, "--no-cache", items=50, epochs=3).exit_code == 0
    parts = []
    for k in (1, 2):
        part = tmp_path / f"part{k}"
        result = _known(server, part, "--no-cache", "--shard", f"{k}/2", items=50, epochs=3)
        assert result.exit_code == 0, result.stderr
        parts.append(part)
        # An item's answers stay in one shard.
        ids = {r["id"].split("@")[0] for r in journal(part)}
        assert all(len([r for r in journal(part) if r["id"].split("@")[0] == i]) == 3
                   for i in list(ids)[:5])
    merged = tmp_path / "merged"
    result = invoke("merge", *parts, "--out", merged, "--no-report",
                    "--definition", KNOWN)
    assert result.exit_code == 0, result.stderr
    assert load(merged, "epochs.json") == load(whole, "epochs.json")


@pytest.mark.slow
def test_a_batch_run_keeps_each_epochs_seed(serve, tmp_path):
    server = serve(answer=answer_varying(1.0, 1.0, seed=5), seed=5,
                   batches=BatchScript(delay_s=0.1))
    batched = tmp_path / "batched"
    assert _known(server, batched, "--no-cache", "--batch", items=30, epochs=2).exit_code == 0
    plain = tmp_path / "plain"
    assert _known(serve(answer=answer_varying(1.0, 1.0, seed=5), seed=5), plain,
                  "--no-cache", items=30, epochs=2).exit_code == 0
    texts = {r["id"]: r["response"]["text"] for r in journal(plain)}
    assert {r["id"]: r["response"]["text"] for r in journal(batched)} == texts
    assert load(batched, "epochs.json")["split"] == load(plain, "epochs.json")["split"]


@pytest.mark.slow
def test_a_suite_entry_asks_every_sample_k_times(serve, tmp_path):
    server = serve(answer=answer_varying(2.0, 1.0, seed=6), seed=6)
    file = tmp_path / "s.toml"
    file.write_text(f'''name = "t"
[[models]]
name = "alpha"
backend = "openai"
model = "m"
base_url = "{server.base_url}/v1"
price_in = 0
price_out = 0

[[benchmarks]]
name = "vqa"
options = {{ data = "{VQA}", scorer = "choice", group_col = "category" }}
epochs = 3
''')
    out = tmp_path / "suite"
    result = invoke("suite", file, "--out", out, "--no-progress")
    assert result.exit_code == 0, result.stderr
    run = out / "vqa" / "alpha"
    summary = load(run, "epochs.json")
    assert summary["epochs"] == 3 and summary["answers"] == 3 * summary["items"]
    again = invoke("suite", file, "--out", out, "--no-progress")
    assert again.exit_code == 0, again.stderr


def test_compare_tests_item_means_and_weighs_the_difference_against_answer_variation(
        serve, tmp_path):
    runs = []
    for seed in (1, 2):
        server = serve(answer=answer_varying(2.0, 1.0, seed=seed), seed=seed)
        run = tmp_path / f"run{seed}"
        assert _known(server, run, "--no-cache", items=40, epochs=3).exit_code == 0
        runs.append(run)
    result = invoke("compare", *runs, "--definition", KNOWN)
    assert result.exit_code == 0, result.stderr
    text = flat(result.stdout)
    assert "bootstrap" in text  # item means are fractions: no McNemar
    assert "answer variation alone: two single passes of run1 and run2" in text
    assert "points on the item means" in text


def test_what_epochs_cannot_go_with_is_refused(tmp_path):
    result = invoke("run", KNOWN, "--epochs", "3", "--target-ci", "5", "--backend",
                    "builtin", "--model", "random", "--out", tmp_path / "r")
    assert result.exit_code != 0 and "--target-ci" in flat(result.stderr)


def test_expected_scores_take_the_sampling_out_of_each_answer(serve, tmp_path):
    server = serve(answer=answer_varying(2.0, 1.0, seed=9), seed=9)
    server.stats.keep_bodies = True
    run = tmp_path / "run"
    result = _known(server, run, "--no-cache", "--score", "expected", items=200, epochs=1)
    assert result.exit_code == 0, result.stderr
    # The request asks for the first token's alternatives.
    body = server.stats.bodies[0]
    assert body["logprobs"] is True and body["top_logprobs"] == 20
    summary = load(run, "epochs.json")
    assert summary["score"] == "expected" and "expected_unavailable" not in summary
    # Each record's expected outcome is the varying model's own chance for its item.
    records = journal(run)
    assert len(records) == 200
    chances = [r["parsed"]["expected_outcome"] for r in records]
    assert all(0.0 <= c <= 1.0 for c in chances) and len(set(chances)) > 100
    expected, sampled = summary["item_means"]["ci95"], summary["first_answers"]["ci95"]
    assert expected[1] - expected[0] < 0.7 * (sampled[1] - sampled[0])
    assert expected[0] <= 2 / 3 <= expected[1]
    # The benchmark's own table stays the sampled answers'.
    assert load(run)["overall"]["accuracy"] == pytest.approx(summary["first_answers"]["value"])
    assert "Expected scores: 1 answer to each of 200 items" in flat(result.stdout)
    # The sample browser still shows the answer, not the expected outcome beside it.
    from visioneval.core.benchmark import BenchmarkDefinition
    from visioneval.core.records import Record

    row = BenchmarkDefinition().browser_row(Record.model_validate(records[0]))
    assert row["v"]["accuracy"]["a"] == records[0]["parsed"]["answer"] != ""


def test_an_answer_without_an_expected_score_is_counted_with_its_reason(serve, tmp_path):
    longer = serve(answer=lambda prompt: "The answer is A")
    run = tmp_path / "longer"
    assert _known(longer, run, "--no-cache", "--score", "expected", items=10,
                  epochs=1).exit_code == 0
    summary = load(run, "epochs.json")
    assert summary["expected_unavailable"] == {"the answer is longer than its first token": 10}
    assert "item_means" not in summary

    def no_logprobs(protocol, body, prompt):
        return {"id": "x", "object": "chat.completion", "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "A"}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1}}

    plain = serve(reply=no_logprobs)
    run = tmp_path / "plain"
    assert _known(plain, run, "--no-cache", "--score", "expected", items=10,
                  epochs=1).exit_code == 0
    assert load(run, "epochs.json")["expected_unavailable"] == {
        "the server sent no log-probabilities": 10}


def test_the_first_tokens_alternatives_are_read_bounded_and_checked():
    from visioneval.backends.openai import first_token_logprobs
    from visioneval.backends.replies import MetadataReader

    meta = MetadataReader("test")
    found = first_token_logprobs({"content": [{"token": "A", "logprob": -0.1, "top_logprobs": [
        {"token": "A", "logprob": -0.1}, {"token": "B", "logprob": -2.4},
        {"token": "C", "logprob": float("nan")}, {"token": "x" * 500, "logprob": -3.0},
        {"token": "D", "logprob": 0.5}]}]}, meta)
    assert found == {"A": -0.1, "B": -2.4}
    assert first_token_logprobs(None, meta) is None
    assert first_token_logprobs({"content": []}, meta) is None
    assert first_token_logprobs({"content": [{"token": "A", "logprob": -0.2}]}, meta) == \
        {"A": -0.2}


def test_runs_that_ask_no_log_probabilities_keep_their_cache_keys():
    from visioneval.core.records import GenerationSettings

    assert GenerationSettings(seed=3).model_dump() == {"temperature": 0.0, "max_tokens": 128,
                                                       "seed": 3}


def test_expected_scores_need_a_server_that_gives_log_probabilities(tmp_path):
    result = invoke("run", KNOWN, "--score", "expected", "--backend", "builtin", "--model",
                    "random", "--out", tmp_path / "r")
    assert result.exit_code != 0 and "log-probabilities" in flat(result.stderr)
