"""`--batch`: SalBench through OpenAI's Batch API and Anthropic's Message Batches, as the
loopback server emulates them (`visioneval.loopback.batches`), against the same run sent one
request at a time; errored and expired requests, resume, and a process killed while its
batches are in flight."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import pytest
from aiohttp import web
from cli_helpers import flat, invoke, journal, load, salbench_args, spawn

from visioneval.backends.batch.base import BatchFailure, BatchLimits, custom_id
from visioneval.backends.batch.openai import OpenAIBatch
from visioneval.backends.openai import OpenAIBackend
from visioneval.loopback.batches import BatchScript

BACKENDS = ("openai", "anthropic")


def _args(server, data: Path, out: Path, *extra: str, backend: str = "openai") -> list:
    return salbench_args(server, data, out, "--splits", "synthetic", "--no-report",
                         *extra, backend=backend)


def _run(server, data: Path, out: Path, *extra: str, backend: str = "openai"):
    result = invoke(*_args(server, data, out, *extra, backend=backend))
    assert result.exit_code == 0, result.stderr
    return result


def _resume(server, run: Path, backend: str = "openai"):
    base = server.base_url + ("/v1" if backend == "openai" else "")
    result = invoke("salbench", "--resume", run, "--base-url", base, "--no-progress",
                    "--no-report")
    assert result.exit_code == 0, result.stderr
    return result


def _plain_metrics(serve, data: Path, out: Path, backend: str) -> dict:
    """The same run without --batch, on a server of its own."""
    _run(serve(), data, out, "--no-cache", backend=backend)
    return load(out)


def _run_info(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_batch_run_scores_as_the_same_run_sent_request_by_request(serve, synth_data,
                                                                    tmp_path, backend):
    server = serve(batches=BatchScript(delay_s=0.2))
    prices = ("--price-in", "2", "--price-out", "8")
    _run(server, synth_data, tmp_path / "batch", "--batch", "--no-cache", *prices,
         backend=backend)
    plain = tmp_path / "plain"
    _run(serve(), synth_data, plain, "--no-cache", *prices, backend=backend)
    assert load(tmp_path / "batch") == load(plain)
    book = server.batch_apis.book
    records = journal(tmp_path / "batch")
    assert book.batches == 1 and len(records) == 24
    key = _run_info(tmp_path / "batch")["batch"]["batches"][0]["key"]
    assert sorted(f"{key}-{c}" for c in book.received) == \
        sorted(custom_id(key, r["id"]) for r in records)
    assert set(book.received.values()) == {1}
    # Records as a normal run writes them: the prompt (images by description), the target.
    kept = ("prompt", "target", "parsed", "scores", "group")
    by_id = {r["id"]: {k: r[k] for k in kept} for r in journal(plain)}
    assert {r["id"]: {k: r[k] for k in kept} for r in records} == by_id
    info = _run_info(tmp_path / "batch")
    [entry] = info["batch"]["batches"]
    assert entry["status"] == "collected" and entry["requests"] == 24
    assert entry["provider"] == backend and info["batch"]["discount"] == 0.5
    assert (tmp_path / "batch" / "batches" / f"{entry['key']}.ids").read_text().count("\n") \
        == 24
    # The same tokens at half the price.
    batch_cost = info["counts"]["cost"]["usd"]
    plain_cost = _run_info(plain)["counts"]["cost"]["usd"]
    assert batch_cost > 0 and batch_cost == pytest.approx(plain_cost / 2)
    assert "batch API's 50%" in info["counts"]["cost"]["source"]


def test_batch_answers_go_into_the_response_cache_and_come_from_it(serve, synth_data,
                                                                   tmp_path):
    server = serve()
    first = _run(server, synth_data, tmp_path / "batch", "--batch")
    again = _run(server, synth_data, tmp_path / "again", "--batch")
    plain = _run(server, synth_data, tmp_path / "plain")
    assert server.batch_apis.book.batches == 1 and server.stats.requests == 0
    # The run's first batch is batch 1, sent to the server it names (not "openai").
    host = server.base_url.removeprefix("http://")
    assert f"batch 1 (batch_1): 24 requests sent to {host}" in first.stderr
    assert "batch 1: answers recorded" in first.stderr
    # A warm cache sends no batch, and says so.
    assert "all 24 answers from the cache: no batch sent" in again.stderr
    assert "requests sent" not in again.stderr
    for result in (again, plain):
        assert "24 from cache" in result.stdout
    assert load(tmp_path / "again") == load(tmp_path / "batch") == load(tmp_path / "plain")


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_errored_requests_are_error_records_and_a_resume_sends_them_in_a_new_batch(
        serve, synth_data, tmp_path, backend):
    server = serve(batches=BatchScript(error_every=5))
    run = tmp_path / "run"
    first = invoke(*_args(server, synth_data, run, "--batch", "--no-cache", backend=backend))
    assert first.exit_code == 1, first.stderr  # some samples failed
    errors = [r for r in journal(run) if r["response"]["error"]]
    assert len(errors) == 24 // 5
    assert all("batch request failed" in r["response"]["error"] for r in errors)
    assert _run_info(run)["counts"]["errors"] == len(errors)

    _resume(server, run, backend)
    book = server.batch_apis.book
    assert book.batches == 2
    again = {custom_id("", r["id"]).lstrip("-") for r in errors}
    assert {c for c, n in book.received.items() if n == 2} == again
    assert sum(book.received.values()) == 24 + len(again)
    info = _run_info(run)
    assert [b["requests"] for b in info["batch"]["batches"]] == [24, len(again)]
    assert info["counts"]["errors"] == 0
    assert load(run) == _plain_metrics(serve, synth_data, tmp_path / "plain", backend)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_expired_batch_leaves_its_unanswered_requests_as_errors(serve, synth_data,
                                                                   tmp_path, backend):
    server = serve(batches=BatchScript(expire_after=10))
    run = tmp_path / "run"
    invoke(*_args(server, synth_data, run, "--batch", "--no-cache", backend=backend))
    records = journal(run)
    failed = [r for r in records if r["response"]["error"]]
    assert len(records) == 24 and len(failed) == 14
    assert all("expire" in r["response"]["error"] for r in failed)

    server.script.batches = BatchScript()
    _resume(server, run, backend)
    assert _run_info(run)["counts"]["errors"] == 0
    assert server.batch_apis.book.batches == 2
    assert sum(server.batch_apis.book.received.values()) == 24 + 14


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_request_answered_twice_keeps_its_first_success(serve, synth_data, tmp_path,
                                                          backend):
    # Each of the first 5 requests is answered, then answered again with an error (OpenAI:
    # in the error file; Anthropic: a second result line).
    server = serve(batches=BatchScript(answer_twice=5))
    run = tmp_path / "run"
    result = _run(server, synth_data, run, "--batch", "--no-cache", backend=backend)
    records = journal(run)
    assert len(records) == 24 and not [r for r in records if r["response"]["error"]]
    said = flat(result.stderr)
    assert said.count("more than once") == 1 and "5 request(s) more than once" in said, said
    assert "the first success of each is kept" in said
    # Nothing left to send again: a resume pays for nothing.
    _resume(server, run, backend)
    assert server.batch_apis.book.batches == 1
    assert set(server.batch_apis.book.received.values()) == {1}
    assert load(run) == _plain_metrics(serve, synth_data, tmp_path / "plain", backend)


def _batch_recorded(run: Path) -> dict | None:
    try:
        entries = (_run_info(run).get("batch") or {}).get("batches") or []
    except (OSError, ValueError):
        return None
    return entries[0] if entries and entries[0].get("id") else None


def _kill_once_a_batch_is_recorded(server, data: Path, run: Path, backend: str) -> dict:
    proc = spawn(*_args(server, data, run, "--batch", "--no-cache", backend=backend))
    deadline = time.monotonic() + 60
    while (entry := _batch_recorded(run)) is None:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no batch was recorded within a minute"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    return entry


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_killed_batch_run_resumes_its_batch_and_sends_no_request_twice(
        serve, synth_data, tmp_path, backend):
    server = serve(batches=BatchScript(delay_s=3600))  # in progress until the test says
    run = tmp_path / "run"
    entry = _kill_once_a_batch_is_recorded(server, synth_data, run, backend)
    journal_file = run / "samples.jsonl"
    assert entry["status"] == "submitted"
    assert not journal_file.exists() or not journal_file.read_text()  # nothing answered

    server.script.batches = BatchScript()  # the provider finishes it meanwhile
    result = _resume(server, run, backend)
    assert f"taking up batch 1 ({entry['id']}), 24 requests" in result.stderr
    book = server.batch_apis.book
    assert book.batches == 1 and len(book.received) == 24
    assert set(book.received.values()) == {1}
    info = _run_info(run)
    assert [b["status"] for b in info["batch"]["batches"]] == ["collected"]
    assert info["sessions"][0]["status"] == "killed"
    assert load(run) == _plain_metrics(serve, synth_data, tmp_path / "plain", backend)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_batch_created_but_not_recorded_is_found_again_on_resume(serve, synth_data,
                                                                  tmp_path, backend):
    """The process ended after the provider made the batch and before its id was written:
    run.json holds the intent only ("submitting", no id), as the ledger writes it first."""
    server = serve(batches=BatchScript(delay_s=3600))
    run = tmp_path / "run"
    _kill_once_a_batch_is_recorded(server, synth_data, run, backend)
    info = _run_info(run)
    info["batch"]["batches"][0] |= {"id": None, "status": "submitting"}
    (run / "run.json").write_text(json.dumps(info))

    server.script.batches = BatchScript()
    _resume(server, run, backend)
    book = server.batch_apis.book
    assert book.batches == 1 and set(book.received.values()) == {1}
    assert _run_info(run)["counts"]["records"] == 24


@pytest.mark.slow
def test_a_batch_taken_up_by_mistake_gives_no_answer_to_the_run(serve, synth_data, tmp_path):
    """Anthropic's batches carry no label: a lost intent is matched by its size and time,
    so another batch of the same size may be taken for it. Its answers carry another
    batch's key: none is recorded as this run's; they are errors, sent again."""
    server = serve(batches=BatchScript(delay_s=3600))
    run = tmp_path / "run"
    _kill_once_a_batch_is_recorded(server, synth_data, run, "anthropic")
    info = _run_info(run)
    old_key = info["batch"]["batches"][0]["key"]
    info["batch"]["batches"][0] |= {"id": None, "status": "submitting", "key": "bother"}
    (run / "run.json").write_text(json.dumps(info))
    (run / "batches" / f"{old_key}.ids").rename(run / "batches" / "bother.ids")

    server.script.batches = BatchScript()
    result = invoke("salbench", "--resume", run, "--base-url", server.base_url,
                    "--no-progress", "--no-report")
    assert result.exit_code == 1  # every sample an error, none an answer of the other batch
    assert "answers none of this run's requests" in flat(result.stderr)
    assert all(r["response"]["error"] for r in journal(run))
    _resume(server, run, "anthropic")
    assert _run_info(run)["counts"]["errors"] == 0
    assert server.batch_apis.book.batches == 2


@pytest.mark.slow
def test_an_intent_the_provider_never_saw_is_sent_again(serve, synth_data, tmp_path):
    """A "submitting" entry the provider has no batch for (the process ended before the
    request left): its samples go into a new batch, once."""
    server = serve(batches=BatchScript(delay_s=3600))
    run = tmp_path / "run"
    _kill_once_a_batch_is_recorded(server, synth_data, run, "openai")
    info = _run_info(run)
    info["batch"]["batches"][0] |= {"id": None, "status": "submitting", "key": "bnever"}
    (run / "run.json").write_text(json.dumps(info))
    (run / "batches" / next((run / "batches").iterdir()).name).rename(
        run / "batches" / "bnever.ids")

    server.script.batches = BatchScript()
    result = _resume(server, run)
    assert "was never created" in result.stderr
    statuses = [b["status"] for b in _run_info(run)["batch"]["batches"]]
    assert statuses == ["lost", "collected"]
    assert _run_info(run)["counts"]["records"] == 24


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_batch_made_whose_reply_was_lost_is_found_not_sent_again(serve, synth_data,
                                                                   tmp_path, backend):
    server = serve(batches=BatchScript(lose_created=1))
    run = tmp_path / "run"
    _run(server, synth_data, run, "--batch", "--no-cache", backend=backend)
    book = server.batch_apis.book
    assert book.batches == 1 and set(book.received.values()) == {1}
    [entry] = _run_info(run)["batch"]["batches"]
    assert entry["status"] == "collected" and _run_info(run)["counts"]["records"] == 24


def test_a_refused_batch_stops_the_run_in_one_line_and_a_resume_sends_it(serve, synth_data,
                                                                         tmp_path):
    server = serve(batches=BatchScript(refuse=True))
    run = tmp_path / "run"
    result = invoke(*_args(server, synth_data, run, "--batch", "--no-cache"))
    assert result.exit_code == 2, result.stderr  # as a refused key stops a run
    assert "HTTP 400" in result.stderr and "not enabled" in result.stderr
    assert "Traceback" not in result.stderr
    assert [b["status"] for b in _run_info(run)["batch"]["batches"]] == ["failed"]
    assert not (run / "samples.jsonl").exists() or not journal(run)

    server.script.batches = BatchScript()
    _resume(server, run)
    assert [b["status"] for b in _run_info(run)["batch"]["batches"]] == ["failed",
                                                                         "collected"]
    assert _run_info(run)["counts"]["records"] == 24


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_batch_id_no_url_may_hold_stops_the_run_in_one_line_and_is_never_polled(
        serve, synth_data, tmp_path, backend):
    # Polled as given, the id would read the run's own uploaded requests (OpenAI: file-1)
    # or another endpoint of the server.
    server = serve(batches=BatchScript(id_as="../files/file-1/content"))
    run = tmp_path / "run"
    result = invoke(*_args(server, synth_data, run, "--batch", "--no-cache",
                           backend=backend))
    assert result.exit_code == 2, result.stderr
    said = flat(result.stderr)
    assert said.count("../files/file-1/content") == 1, said
    assert "'../files/file-1/content' as a batch id, which is not one" in said
    assert "Traceback" not in result.stderr
    book = server.batch_apis.book
    assert book.polls == 0 and not book.file_reads
    assert [b["status"] for b in _run_info(run)["batch"]["batches"]] == ["failed"]
    # The resume does not ask after it again: its samples go in a new batch.
    server.script.batches = BatchScript()
    _resume(server, run, backend)
    assert [b["status"] for b in _run_info(run)["batch"]["batches"]] == ["failed",
                                                                         "collected"]
    assert _run_info(run)["counts"]["records"] == 24 and not book.file_reads["file-1"]


def test_a_recorded_batch_id_no_url_may_hold_is_taken_as_lost_on_resume(serve, synth_data,
                                                                        tmp_path):
    server = serve()
    run = tmp_path / "run"
    _run(server, synth_data, run, "--batch", "--no-cache")
    # As a run.json written against a server that gave such an id would hold it.
    info = _run_info(run)
    entry = info["batch"]["batches"][0]
    entry |= {"status": "submitted", "id": "../files/file-1/content"}
    (run / "run.json").write_text(json.dumps(info))
    (run / "samples.jsonl").write_text("")
    polls, reads = server.batch_apis.book.polls, sum(server.batch_apis.book.file_reads.values())
    result = _resume(server, run)
    said = flat(result.stderr)
    assert said.count("taken as lost") == 1, said
    assert "'../files/file-1/content' as a batch id" in said
    book = server.batch_apis.book
    assert book.batches == 2 and book.polls == polls + 1
    assert sum(book.file_reads.values()) == reads + 1 and not book.file_reads["file-1"]
    assert [b["status"] for b in _run_info(run)["batch"]["batches"]] == ["lost", "collected"]
    assert len(journal(run)) == 24 and not [r for r in journal(run) if r["response"]["error"]]


def test_a_results_file_id_no_url_may_hold_is_not_read(tmp_path):
    """An OpenAI batch whose output file id is not one: that file is not asked for, the
    poll says why, and the batch's requests have no answer (errors, sent again)."""
    async def scenario():
        asked: list[str] = []

        async def batch(request: web.Request) -> web.Response:
            asked.append(request.path)
            return web.json_response({
                "id": "batch_1", "status": "completed", "output_file_id": "../../batches",
                "error_file_id": "file-err", "request_counts": {"total": 2}})

        async def content(request: web.Request) -> web.Response:
            asked.append(request.path)
            return web.Response(body=json.dumps({
                "custom_id": "vx", "response": {"status_code": 500, "body": {
                    "error": {"message": "boom"}}}}).encode() + b"\n")

        app = web.Application()
        app.router.add_get("/v1/batches/{id}", batch)
        app.router.add_get("/v1/files/{id}/content", content)
        runner, port = await _listen(app)
        backend = OpenAIBackend("m", f"http://127.0.0.1:{port}/v1", api_key=None,
                                api_key_env=None)
        client = OpenAIBatch(backend)
        try:
            state = await client.poll("batch_1")
            refused = await client.poll("../files/file-err")
            answers = await client.results(state)
        finally:
            await backend.aclose()
            await runner.cleanup()
        return asked, state, refused, answers

    asked, state, refused, answers = asyncio.run(scenario())
    assert asked == ["/v1/batches/batch_1", "/v1/files/file-err/content"]
    assert state.ended and state.files == ("file-err",)
    assert "'../../batches' as a file id, which is not one" in state.detail
    assert isinstance(refused, BatchFailure) and not refused.transient
    assert "\n" not in refused.message
    assert answers.get("vx").error is not None and len(answers) == 1


@pytest.mark.parametrize("extra, said", [
    (("--backend", "ollama"), "the ollama backend has no batch API"),
    (("--max-cost", "1"), "--max-cost stops sending request by request"),
    (("--executor", "ray"), "without --shard or --executor ray"),
    (("--shard", "1/2"), "without --shard or --executor ray"),
])
def test_batch_refuses_what_it_cannot_do_in_one_line(serve, synth_data, tmp_path, extra,
                                                     said):
    server = serve()
    args = _args(server, synth_data, tmp_path / "run", "--batch")
    if extra[0] == "--backend":
        args[args.index("--backend") + 1] = extra[1]
    else:
        args += list(extra)
    result = invoke(*args)
    assert result.exit_code == 2
    assert said in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert server.stats.requests == 0 and server.batch_apis.book.batches == 0


def test_batch_on_resume_must_say_what_the_run_recorded(synth_data, tmp_path):
    run = tmp_path / "run"
    assert invoke("salbench", "--backend", "builtin", "--model", "random", "--data-dir",
                  synth_data, "--configs", "P3", "--num-samples", "2", "--out", run,
                  "--no-progress", "--no-report").exit_code == 0
    result = invoke("salbench", "--resume", run, "--batch")
    assert result.exit_code == 2
    assert "--batch: the run was sent request by request" in result.stderr


def test_a_batch_run_resumed_with_max_cost_is_refused_in_one_line(serve, synth_data,
                                                                   tmp_path):
    server = serve()
    run = tmp_path / "run"
    _run(server, synth_data, run, "--batch", "--no-cache", "--configs", "P3",
         "--price-in", "2", "--price-out", "8")
    sent = server.stats.requests
    result = invoke("salbench", "--resume", run, "--base-url", server.base_url + "/v1",
                    "--no-progress", "--max-cost", "1")
    assert result.exit_code == 2
    assert "--max-cost stops sending request by request" in result.stderr
    assert server.stats.requests == sent


def test_the_dry_run_shows_the_batch_price_beside_the_normal_one(synth_data):
    result = invoke("salbench", "--backend", "openai", "--model", "gpt-4o", "--data-dir",
                    synth_data, "--splits", "synthetic", "--dry-run")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    cost = next(line for line in lines if line.strip().startswith("cost "))
    batch = next(line for line in lines if line.strip().startswith("batch cost"))
    assert "50% of the price" in batch
    low, high = (float(x.strip("$")) for x in cost.split()[1:4:2])
    batch_low, batch_high = (float(x.strip("$")) for x in batch.split()[2:5:2])
    assert batch_low == pytest.approx(low / 2, rel=0.01)
    assert batch_high == pytest.approx(high / 2, rel=0.01)


def test_a_batch_dry_run_takes_max_cost_as_a_run_without_batch_does(synth_data):
    """A dry run sends nothing, so --max-cost has nothing to limit there: not refused."""
    result = invoke("salbench", "--backend", "openai", "--model", "gpt-4o", "--data-dir",
                    synth_data, "--splits", "synthetic", "--batch", "--max-cost", "5",
                    "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert "batch cost" in result.stdout


def test_batch_api_failures_are_values_with_one_line(tmp_path):
    """A server that fails every way a batch API can: each call answers a BatchFailure
    (transient or not), never raises, and no key is in its message."""
    async def scenario() -> list[object]:
        calls = {"n": 0}

        async def files(request: web.Request) -> web.Response:
            calls["n"] += 1
            return web.json_response({"error": {"message": "busy"}}, status=503)

        async def batch(request: web.Request) -> web.Response:
            return web.json_response({"error": {"message": "no such batch"}}, status=404)

        async def content(request: web.Request) -> web.Response:
            return web.Response(body=b"{not json\n" + json.dumps({
                "custom_id": "vx", "response": {"status_code": 200, "body": {
                    "choices": [{"message": {"content": "yes"}}]}}}).encode())

        app = web.Application()
        app.router.add_post("/v1/files", files)
        app.router.add_get("/v1/batches/{id}", batch)
        app.router.add_get("/v1/files/{id}/content", content)
        runner, port = await _listen(app)
        backend = OpenAIBackend("m", f"http://127.0.0.1:{port}/v1", api_key="sk-secret-key",
                                api_key_env="KEY")
        client = OpenAIBatch(backend)
        try:
            out: list[object] = [await client.submit([b"{}"], "tag"),
                                 await client.poll("batch_1")]
            from visioneval.backends.batch.base import BatchState

            out.append(await client.results(BatchState("b", "completed", True,
                                                       files=("f",))))
            await runner.cleanup()
            out.append(await client.poll("batch_1"))  # nothing listens any more
        finally:
            await backend.aclose()
        return out

    busy, missing, answers, gone = asyncio.run(scenario())
    assert isinstance(busy, BatchFailure) and busy.transient and "HTTP 503" in busy.message
    assert isinstance(missing, BatchFailure) and not missing.transient
    assert "HTTP 404" in missing.message
    assert not isinstance(answers, BatchFailure)
    assert answers.get("vx").text == "yes"  # the broken line is left out
    assert isinstance(gone, BatchFailure) and gone.transient
    for failure in (busy, missing, gone):
        assert "sk-secret-key" not in failure.message and "\n" not in failure.message


@pytest.mark.slow
def test_several_thousand_requests_go_in_batches_under_the_limits(serve, tmp_path,
                                                                  monkeypatch):
    from visioneval.benchmarks.salbench.synth import write_synthetic

    data = tmp_path / "data"
    write_synthetic(data, 1000, seed=4)  # 3,000 samples
    # A provider whose batches hold at most 1,200 requests: three batches.
    monkeypatch.setattr(OpenAIBatch, "limits", BatchLimits(1200, 200 * 1_000_000))
    server = serve(batches=BatchScript(delay_s=0.5, error_every=97))
    run = tmp_path / "run"
    first = invoke(*_args(server, data, run, "--batch", "--no-cache"))
    assert first.exit_code == 1, first.stderr  # some samples failed
    book = server.batch_apis.book
    info = _run_info(run)
    assert [b["requests"] for b in info["batch"]["batches"]] == [1200, 1200, 600]
    errors = info["counts"]["errors"]
    assert info["counts"]["records"] == 3000 and errors == 3000 // 97
    _resume(server, run)
    assert _run_info(run)["counts"]["errors"] == 0
    assert sum(book.received.values()) == 3000 + errors
    assert max(book.received.values()) == 2


def test_a_missing_ids_file_is_one_line_naming_it(serve, synth_data, tmp_path):
    server = serve(batches=BatchScript(error_every=3))
    run = tmp_path / "run"
    invoke(*_args(server, synth_data, run, "--batch", "--no-cache"))
    info = _run_info(run)
    entry = info["batch"]["batches"][0]
    entry["status"] = "submitted"  # as if its answers were not collected yet
    (run / "run.json").write_text(json.dumps(info))
    ids = run / "batches" / f"{entry['key']}.ids"
    ids.unlink()
    base = server.base_url + "/v1"
    result = invoke("salbench", "--resume", run, "--base-url", base, "--no-progress")
    assert result.exit_code == 2, result.stderr
    assert str(ids) in result.stderr and "Traceback" not in result.stderr
    assert server.batch_apis.book.batches == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lost_batch_is_looked_up_on_every_page_of_the_list(serve, backend):
    """More batches made since than one page of the provider's list holds: the lookup
    reads on until it reaches older ones."""
    from visioneval.backends.anthropic import AnthropicBackend
    from visioneval.backends.batch.anthropic import AnthropicBatch
    from visioneval.core.records import GenerationSettings, Request, user

    server = serve()
    request = Request((user("hi"),), GenerationSettings(max_tokens=8))

    async def scenario() -> tuple[object, str]:
        if backend == "openai":
            client: OpenAIBatch | AnthropicBatch = OpenAIBatch(OpenAIBackend(
                "m", server.base_url + "/v1", api_key=None, api_key_env=None))
        else:
            client = AnthropicBatch(AnthropicBackend("m", server.base_url, api_key=None,
                                                     api_key_env=None))
        since = time.time()
        try:
            # Ours first (two requests), then 130 of one request each, made after it.
            ours = await client.submit([client.encode(f"bours-{i}", request)
                                        for i in range(2)], "bours")
            for i in range(130):
                made = await client.submit([client.encode(f"b{i}-x", request)], f"b{i}")
                assert isinstance(made, str)
            found = await client.find("bours", 2, since)
        finally:
            await client.backend.aclose()
        assert isinstance(ours, str)
        return found, ours

    found, ours = asyncio.run(scenario())
    assert found == ours


def _samples_file(run: Path) -> Path:
    return run / "batches" / f"{_run_info(run)['batch']['batches'][0]['key']}.ids"


@pytest.mark.slow
def test_a_resumed_batch_records_each_answer_once_from_its_samples_file(serve, synth_data,
                                                                        tmp_path):
    """The samples wait for their answers in the batch's file, not in memory: a resume
    reads them back from it, records each once, and passes over a sample the file names
    that the data does not hold (a line copied in by hand)."""
    server = serve(batches=BatchScript(delay_s=3600))
    run = tmp_path / "run"
    _kill_once_a_batch_is_recorded(server, synth_data, run, "openai")
    path = _samples_file(run)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 24
    assert set(lines[0]) == {"id", "group", "target", "metadata", "prompt", "cache_key"}
    assert lines[0]["prompt"][0]["parts"][0]["image"]["mime"] == "image/png"  # no pixels
    stranger = lines[0] | {"id": "P3/not-in-this-data"}
    with path.open("a") as fh:
        fh.write(json.dumps(stranger) + "\n")

    server.script.batches = BatchScript()
    _resume(server, run)
    ids = [r["id"] for r in journal(run)]
    assert len(ids) == len(set(ids)) == 24 and stranger["id"] not in ids
    assert set(server.batch_apis.book.received.values()) == {1}
    assert load(run) == _plain_metrics(serve, synth_data, tmp_path / "plain", "openai")


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_ids_file_of_an_earlier_visioneval_is_resumed_from_the_data(serve, synth_data,
                                                                       tmp_path, backend):
    """A batch in flight whose file holds one JSON string a line (sample ids, as visioneval
    wrote them before it kept the samples there): its samples are taken from the data as
    the resume reads it, every answer recorded once."""
    server = serve(batches=BatchScript(delay_s=3600))
    run = tmp_path / "run"
    _kill_once_a_batch_is_recorded(server, synth_data, run, backend)
    path = _samples_file(run)
    ids = [json.loads(line)["id"] for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(i) + "\n" for i in ids))

    server.script.batches = BatchScript()
    _resume(server, run, backend)
    recorded = [r["id"] for r in journal(run)]
    assert sorted(recorded) == sorted(ids) and len(set(recorded)) == 24
    assert set(server.batch_apis.book.received.values()) == {1}
    assert load(run) == _plain_metrics(serve, synth_data, tmp_path / "plain", backend)


def test_an_unreadable_samples_file_is_one_line_naming_it(serve, synth_data, tmp_path):
    server = serve(batches=BatchScript(error_every=3))
    run = tmp_path / "run"
    invoke(*_args(server, synth_data, run, "--batch", "--no-cache"))
    info = _run_info(run)
    info["batch"]["batches"][0]["status"] = "submitted"
    (run / "run.json").write_text(json.dumps(info))
    path = _samples_file(run)
    path.write_text(path.read_text() + "[1, 2]\n")
    result = invoke("salbench", "--resume", run, "--base-url", server.base_url + "/v1",
                    "--no-progress")
    assert result.exit_code == 2, result.stderr
    assert f"{path} line 25: not a sample of the batch" in flat(result.stderr)
    assert "Traceback" not in result.stderr


def test_a_batch_status_outside_the_known_ones_is_refused_when_run_json_is_read(
        serve, synth_data, tmp_path):
    server = serve()
    run = tmp_path / "run"
    _run(server, synth_data, run, "--batch", "--no-cache", "--configs", "P3")
    info = _run_info(run)
    info["batch"]["batches"][0]["status"] = "colected"
    (run / "run.json").write_text(json.dumps(info))
    result = invoke("salbench", "--resume", run, "--base-url", server.base_url + "/v1",
                    "--no-progress")
    assert result.exit_code == 2
    said = flat(result.stderr)
    assert f"{run / 'run.json'}: batch.batches.0.status: Input should be" in said
    assert "'collected'" in said and "Traceback" not in said
    from visioneval.core.runfiles import BatchEntry

    entry = BatchEntry(key="b1", provider="openai", submitted_at="", requests=1,
                       status="submitted")
    with pytest.raises(ValueError, match="status"):
        entry.status = "colected"  # type: ignore[assignment]


def _long_now_and_then(made: list[str]):
    """The loopback's usual answer, but a quarter of the prompts (by their image) get it
    with 20 KB of text after it."""
    import zlib

    from visioneval.loopback.server import answer_hash

    def answer(prompt) -> str:
        text = answer_hash(prompt)
        if zlib.crc32(prompt.images[-1][-256:].encode()) % 4 == 0:
            made.append(text)
            return text + " " + "x" * 20_000
        return text

    return answer


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_answer_line_over_the_reply_cap_is_an_error_record_for_its_sample(
        serve, synth_data, tmp_path, backend):
    made: list[str] = []
    server = serve(answer=_long_now_and_then(made))
    run = tmp_path / "run"
    result = invoke(*_args(server, synth_data, run, "--batch", "--no-cache",
                           "--max-reply-mb", "0.01", backend=backend))
    assert result.exit_code == 1, result.stderr  # some samples failed; the run finished
    assert 0 < len(made) < 24
    records = journal(run)
    failed = [r for r in records if r["response"]["error"]]
    assert len(records) == 24 and len(failed) == len(made)
    assert {r["response"]["error"] for r in failed} == \
        {"batch answer over 0.01 MB (--max-reply-mb); not read"}
    assert all(r["response"]["text"] for r in records if not r["response"]["error"])
    info = _run_info(run)
    assert [b["status"] for b in info["batch"]["batches"]] == ["collected"]
    assert info["status"] == "finished" and info["counts"]["errors"] == len(made)


def test_a_results_file_is_read_line_by_line_under_its_caps(tmp_path, monkeypatch):
    """A gzip results file sent in small pieces (lines cut across them): each answer is
    read, a line over the reply cap and a line that is not JSON are errors of the requests
    they name, a last line without its newline counts; a file over the total cap and a
    connection dropped mid-file are BatchFailures, never raised."""
    import gzip

    from visioneval.backends.batch import transport
    from visioneval.backends.batch.base import BatchState
    from visioneval.backends.http import HttpLimits

    def line(custom: str, text: str) -> bytes:
        return json.dumps({"custom_id": custom, "response": {"status_code": 200, "body": {
            "choices": [{"message": {"content": text}}]}}}).encode()

    body = b"\n".join([line(f"v{i}", f"answer {i}") for i in range(300)]
                      + [line("vbig", "x" * 50_000), b'{"custom_id": "vbad", "resp',
                         b"", line("vlast", "the last")])
    packed = gzip.compress(body)
    # 5 MB of blanks from a few KB in one piece: decoded a MiB at a time, passed over.
    dense = gzip.compress(line("vfirst", "1") + b"\n" + b" " * 5_000_000 + b"\n"
                          + line("vafter", "2") + b"\n")

    async def content(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Encoding": "gzip",
                                           "Content-Type": "application/octet-stream"})
        await resp.prepare(request)
        if request.match_info["id"] == "dense":
            await resp.write(dense)
            await resp.write_eof()
            return resp
        cut = len(packed) // 2 if request.match_info["id"] == "dropped" else len(packed)
        for at in range(0, cut, 333):
            await resp.write(packed[at:min(at + 333, cut)])
        if cut < len(packed):
            assert request.transport is not None
            request.transport.abort()
            return resp
        await resp.write_eof()
        return resp

    async def scenario() -> list[object]:
        app = web.Application()
        app.router.add_get("/v1/files/{id}/content", content)
        runner, port = await _listen(app)
        backend = OpenAIBackend("m", f"http://127.0.0.1:{port}/v1", api_key=None,
                                api_key_env=None, limits=HttpLimits(max_reply_bytes=10_000))
        client = OpenAIBatch(backend)
        out: list[object] = []
        try:
            for file_id in ("whole", "dropped", "dense"):
                out.append(await client.results(BatchState("b", "completed", True,
                                                           files=(file_id,)), tmp_path))
            monkeypatch.setattr(transport, "FILE_CAP_BYTES", len(body) - 1)
            out.append(await client.results(BatchState("b", "completed", True,
                                                       files=("whole",)), tmp_path))
        finally:
            await backend.aclose()
            await runner.cleanup()
        return out

    answers, dropped, dense, too_big = asyncio.run(scenario())
    assert not isinstance(answers, BatchFailure)
    assert len(answers) == 303
    assert [answers.get(f"v{i}").text for i in (0, 150, 299)] == \
        ["answer 0", "answer 150", "answer 299"]
    assert answers.get("vbig").error == "batch answer over 0.00954 MB (--max-reply-mb); not read"
    assert answers.get("vbad").error == "batch answer line is not JSON"
    assert answers.get("vlast").text == "the last"
    assert answers.get("vnone") is None
    answers.close()
    assert isinstance(dropped, BatchFailure) and dropped.transient
    assert not isinstance(dense, BatchFailure) and len(dense) == 2
    assert (dense.get("vfirst").text, dense.get("vafter").text) == ("1", "2")
    dense.close()
    assert isinstance(too_big, BatchFailure) and "not read further" in too_big.message
    assert list(tmp_path.iterdir()) == []  # the answers' files have no name


def test_a_target_json_would_change_reaches_the_scorer_unchanged(serve, tmp_path):
    """A benchmark of one's own whose even questions' targets are tuples (JSON would give
    them back as lists): only their ids go into the batch's file, the samples wait in
    memory, and the scorer sees the very type the benchmark gave."""
    from pydantic import BaseModel

    from visioneval import api
    from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
    from visioneval.core.records import Sample, user
    from visioneval.engine.options import EngineOptions

    class NoOptions(BaseModel):
        pass

    class Typed(Benchmark[NoOptions]):
        name = "typed-targets"

        def samples(self):
            for i in range(6):
                yield Sample(id=f"q{i}", group="g", target=("a", i) if i % 2 == 0 else "a",
                             messages=(user(f"Question {i}: which letter?"),),
                             metadata={"i": i})

        def score(self, sample, text):
            typed = isinstance(sample.target, tuple) == (sample.metadata["i"] % 2 == 0)
            return {"model": text}, {"typed": {"correct": float(typed)}}

    class TypedDefinition(BenchmarkDefinition):
        summary = "Targets of several Python types."
        benchmark = Typed

    server = serve()
    result = api.run(TypedDefinition, model="m", backend="openai",
                     base_url=server.base_url + "/v1", out=tmp_path / "run", report=False,
                     batch=True, engine=EngineOptions())
    assert (result.n_records, result.n_errors) == (6, 0)
    assert [r["scores"]["typed"]["correct"] for r in journal(tmp_path / "run")] == [1.0] * 6
    lines = [json.loads(line) for line in
             _samples_file(tmp_path / "run").read_text().splitlines()]
    assert [set(line) == {"id"} for line in lines] == [True, False] * 3


async def _listen(app: web.Application) -> tuple[web.AppRunner, int]:
    """`app` served on 127.0.0.1 at a free port: its runner (to clean up) and the port."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


@pytest.mark.parametrize(("url", "said"), [
    ("https://api.openai.com/v1", "OpenAI"),
    ("http://127.0.0.1:8765/v1", "127.0.0.1:8765"),
    ("https://user:pw@gateway.example.com/openai/v1", "gateway.example.com"),
])
def test_a_batch_s_lines_name_the_provider_only_on_its_own_host(url, said):
    backend = OpenAIBackend("m", url, api_key=None, api_key_env=None)
    assert OpenAIBatch(backend).destination == said
