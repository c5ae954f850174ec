"""Reasoning models are scored on their final answer: the thinking (inline `<think>` text,
a `reasoning_content`/`reasoning` field, Anthropic thinking blocks, Ollama's `thinking`) is
set aside before parsing, kept in the record and shown in the report; a reply that ran out of
max_tokens while thinking is an error of its own. SalBench runs go to the loopback server
over real HTTP."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import aiohttp
import pytest
from cli_helpers import flat, invoke, journal, load, salbench_args

from visioneval.backends import reasoning
from visioneval.backends.anthropic import parse_messages_response
from visioneval.backends.base import PermanentError, TransientError
from visioneval.backends.ollama import parse_chat_response as parse_ollama
from visioneval.backends.openai import parse_chat_response as parse_openai
from visioneval.backends.reasoning import OutOfTokens, Split, split
from visioneval.backends.replies import MetadataReader
from visioneval.benchmarks.salbench.parse import lenient_labels, strict_tokens
from visioneval.core.records import Response
from visioneval.engine.cache import Origin, ResponseCache
from visioneval.engine.retry import error_reason
from visioneval.loopback.server import (
    Prompt,
    ServerScript,
    Thinking,
    ThreadedServer,
    answer_fixed,
    answer_popout,
    musing,
)
from visioneval.report.browser_rows import excerpt

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
P3 = ("orientation", "color", "size")
OUT_OF_TOKENS = str(OutOfTokens())


# The splitter -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("size", Split("size")),
    ("  size \n", Split("  size \n")),  # a plain answer is not touched, whitespace and all
    ("", Split("")),
    ("<think>color or size?</think>size", Split("size", "color or size?")),
    ("\n <think>\n weigh \n</think>\n\n size \n", Split("size", "weigh")),
    ("<think></think>size", Split("size", "")),  # empty reasoning (Qwen3, thinking off)
    ("<think>\n\n</think>\n\ncolor", Split("color", "")),
    ("weigh color</think>\nsize", Split("size", "weigh color")),  # template opened the tag
    ("</think>size", Split("size", "")),
    ("<think>a<think>b</think>c</think> size", Split("size", "a<think>b</think>c")),  # nested
    ("<think>a</think><think>b</think>size", Split("size", "a</think><think>b")),
    ("a</think>b</think>size", Split("size", "a</think>b")),
    ("<think>still weighing color", Split("", "still weighing color", unclosed=True)),
    ("<think>", Split("", "", unclosed=True)),
    ("<think>done</think>", Split("", "done")),
    ("size. Models write <think> before they answer.",
     Split("size. Models write <think> before they answer.")),
    ("Models write <think>notes</think> first; size", Split(
        "Models write <think>notes</think> first; size")),  # a mention, not a leading block
    ("<THINK>upper</THINK>size", Split("<THINK>upper</THINK>size")),  # case-sensitive
    ("<thinking>x</thinking>size", Split("<thinking>x</thinking>size")),  # not a think tag
])
def test_split_takes_a_leading_reasoning_part_off(text, expected):
    assert split(text) == expected


def test_join_keeps_the_reasoning_parts_in_order_and_none_when_empty():
    assert reasoning.join("a ", None, "", " b") == "a\n\nb"
    assert reasoning.join(None, " \n", "") is None


def test_excerpt_keeps_both_ends_of_a_long_reasoning():
    assert excerpt("short thought") == "short thought"
    text = "START " + "x" * 5000 + " END"
    shown = excerpt(text)
    assert shown.startswith("START ") and shown.endswith(" END")
    assert f"({len(text) - 600} characters left out" in shown and len(shown) < 800


# The three reply readers --------------------------------------------------------------------

def _openai(message: dict, finish: str | None = "stop", usage: dict | None = None) -> dict:
    return {"choices": [{"finish_reason": finish, "message": {"role": "assistant", **message}}],
            "usage": usage or {"prompt_tokens": 5, "completion_tokens": 9}}


@pytest.mark.parametrize("message, answer, thought", [
    ({"content": "size", "reasoning_content": "weigh color"}, "size", "weigh color"),
    ({"content": "size", "reasoning": "weigh color"}, "size", "weigh color"),  # OpenRouter
    ({"content": "size", "reasoning_content": "same", "reasoning": "same"}, "size", "same"),
    ({"content": "size", "reasoning_content": None, "reasoning": "late"}, "size", "late"),
    ({"content": "<think>inline</think>size", "reasoning_content": "field"}, "size",
     "field\n\ninline"),
    ({"content": [{"type": "text", "text": "<think>parts</think>"}, {"type": "text",
                                                                      "text": "size"}]},
     "size", "parts"),
    ({"content": "size"}, "size", None),
])
def test_openai_reader_sets_reasoning_aside(message, answer, thought):
    response = parse_openai(_openai(message), MetadataReader("test"))
    assert (response.text, response.reasoning) == (answer, thought)
    assert response.completion_tokens == 9


def test_openai_reader_out_of_tokens_cases():
    meta = MetadataReader("test")
    with pytest.raises(OutOfTokens):  # vLLM: reasoning parsed out, no content at all
        parse_openai(_openai({"content": None, "reasoning_content": "hmm"}, "length"), meta)
    with pytest.raises(OutOfTokens):  # inline, cut while thinking
        parse_openai(_openai({"content": "<think>hmm"}, "length"), meta)
    with pytest.raises(OutOfTokens):  # OpenAI's o-series: reasoning counted, never sent
        parse_openai(_openai({"content": ""}, "length", {
            "completion_tokens": 64, "completion_tokens_details": {"reasoning_tokens": 64}}),
            meta)
    with pytest.raises(OutOfTokens):  # unclosed, and the server says nothing of why
        parse_openai(_openai({"content": "<think>hmm"}, None), meta)
    # A plain reply cut at max_tokens keeps its (partial) answer, as before.
    assert parse_openai(_openai({"content": "si"}, "length"), meta).text == "si"
    # A reply cut after the thinking closed keeps what it answered.
    cut_late = parse_openai(_openai({"content": "<think>a</think>si"}, "length"), meta)
    assert (cut_late.text, cut_late.reasoning) == ("si", "a")
    # Reasoning and an empty answer at a natural stop: the model answered nothing.
    empty = parse_openai(_openai({"content": "", "reasoning_content": "hmm"}), meta)
    assert (empty.text, empty.reasoning) == ("", "hmm")
    # No content, not cut short: the server misbehaved, retried as before.
    with pytest.raises(TransientError, match="no text answer"):
        parse_openai(_openai({"content": None, "reasoning_content": "hmm"}), meta)
    with pytest.raises(PermanentError, match="refused"):
        parse_openai(_openai({"content": None, "refusal": "no"}), meta)


def test_anthropic_reader_sets_thinking_blocks_aside():
    meta = MetadataReader("test")
    data = {"stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 4},
            "content": [{"type": "thinking", "thinking": "color?", "signature": "s"},
                        {"type": "redacted_thinking", "data": "enc"},
                        {"type": "text", "text": "size"}]}
    response = parse_messages_response(data, meta)
    assert response.text == "size"
    assert response.reasoning == f"color?\n\n{reasoning.REDACTED}"
    cut = {"stop_reason": "max_tokens",
           "content": [{"type": "thinking", "thinking": "still", "signature": "s"}]}
    with pytest.raises(OutOfTokens):
        parse_messages_response(cut, meta)
    cut["stop_reason"] = "end_turn"  # thinking and no text, not cut: retried as before
    with pytest.raises(TransientError, match="no text block"):
        parse_messages_response(cut, meta)


def test_ollama_reader_sets_thinking_aside():
    meta = MetadataReader("test")
    data = {"message": {"role": "assistant", "content": "size", "thinking": "color?"},
            "done_reason": "stop", "eval_count": 7}
    response = parse_ollama(data, meta)
    assert (response.text, response.reasoning, response.completion_tokens) == (
        "size", "color?", 7)
    with pytest.raises(OutOfTokens):
        parse_ollama({"message": {"content": "", "thinking": "still"}, "done_reason": "length"},
                     meta)
    with pytest.raises(OutOfTokens):  # unclosed and no done_reason
        parse_ollama({"message": {"content": "<think>still"}}, meta)
    # Unclosed but the server says the model stopped by itself: it answered nothing.
    stopped = parse_ollama({"message": {"content": "<think>still"}, "done_reason": "stop"},
                           meta)
    assert (stopped.text, stopped.reasoning) == ("", "still")


def test_out_of_tokens_is_one_distinct_final_reason():
    assert isinstance(OutOfTokens(), PermanentError)
    assert "\n" not in OUT_OF_TOKENS and "--max-tokens" in OUT_OF_TOKENS
    for attempts in (1, 6):
        assert error_reason(f"failed after {attempts} attempt(s): {OUT_OF_TOKENS}") == \
            OUT_OF_TOKENS
    assert error_reason("failed after 1 attempt(s): HTTP 400: bad max_tokens") != \
        OUT_OF_TOKENS


def test_record_json_has_reasoning_only_when_there_was_some():
    assert "reasoning" not in Response(text="size").model_dump_json()
    assert json.loads(Response(text="size", reasoning="r").model_dump_json())[
        "reasoning"] == "r"


def test_answers_cached_with_their_thinking_are_split_on_reading(tmp_path):
    """Entries written before reasoning was set aside hold the raw reply text."""
    cache = ResponseCache(tmp_path / "c.sqlite3")
    origin = Origin.of(tmp_path / "run", {"backend": "openai", "model": "m"})
    cache.put("old", Response(text="<think>color?</think>\nsize", finish_reason="stop"), origin)
    cache.put("cut", Response(text="<think>still weighing", finish_reason="length"), origin)
    cache.put("new", Response(text="size", reasoning="color?"), origin)
    cache.put("mention", Response(text="size; models write <think> first"), origin)
    cache.flush()
    old = cache.get("old")
    assert old is not None and (old.text, old.reasoning, old.cached) == ("size", "color?", True)
    assert cache.get("cut") is None  # asked again, it is an error, not a reused answer
    new = cache.get("new")
    assert new is not None and (new.text, new.reasoning) == ("size", "color?")
    mention = cache.get("mention")
    assert mention is not None and mention.text == "size; models write <think> first"


# SalBench end to end ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def plain_run(synth_data, tmp_path_factory) -> Path:
    """The popout baseline answering plainly: what every reasoning run must score."""
    out = tmp_path_factory.mktemp("plain") / "run"
    with ThreadedServer(ServerScript(answer=answer_popout)) as server:
        result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                       "--no-cache"))
    assert result.exit_code == 0, result.output
    return out


def _reasoning_run(serve, synth_data, out, backend, monkeypatch, **script):
    if backend == "anthropic":
        monkeypatch.setenv("ANTHROPIC_API_KEY", "any")
    server = serve(answer=answer_popout, **script)
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3", "--no-cache",
                                   backend=backend))
    return server, result


def _texts(run: Path) -> dict[str, str]:
    return {r["id"]: r["response"]["text"] for r in journal(run)}


@pytest.mark.parametrize("backend, thinking", [
    ("openai", Thinking("inline")),
    ("openai", Thinking("closing")),
    ("openai", Thinking("field")),  # reasoning_content
    ("openai", Thinking("field", openai_field="reasoning")),
    ("anthropic", Thinking("field")),  # thinking blocks
    ("anthropic", Thinking("inline")),
    ("ollama", Thinking("field")),  # message.thinking
], ids=["openai-inline", "openai-closing", "openai-reasoning_content", "openai-reasoning",
        "anthropic-thinking-blocks", "anthropic-inline", "ollama-thinking"])
def test_reasoning_run_scores_like_the_plain_answers(serve, synth_data, tmp_path, plain_run,
                                                     monkeypatch, backend, thinking):
    out = tmp_path / "run"
    _, result = _reasoning_run(serve, synth_data, out, backend, monkeypatch, thinking=thinking)
    assert result.exit_code == 0, result.output
    assert load(out) == load(plain_run)
    assert _texts(out) == _texts(plain_run)
    for record in journal(out):
        thought = record["response"]["reasoning"]
        assert all(option in thought for option in P3)  # the musing names every option
        assert "think>" not in thought and "think>" not in record["response"]["text"]
    assert load(out, "run.json")["counts"]["answers_with_reasoning"] == 8
    assert load(plain_run, "run.json")["counts"]["answers_with_reasoning"] == 0


def test_inline_thinking_run_matches_the_plain_run_and_shows_in_the_report(
        serve, synth_data, tmp_path, plain_run, monkeypatch):
    out = tmp_path / "run"
    _, result = _reasoning_run(serve, synth_data, out, "openai", monkeypatch,
                               thinking=Thinking("inline"))
    assert result.exit_code == 0, result.output
    assert load(out) == load(plain_run)
    records = journal(out)
    # What the reader was given: a reply that neither parser could read as it stands.
    prompt = Prompt(records[0]["prompt"][0]["parts"][-1], [])
    raw = Thinking("inline").text(musing(prompt), "size")
    assert raw.startswith("<think>") and records[0]["response"]["reasoning"] in raw
    assert strict_tokens(raw) - set(P3) and lenient_labels(raw, P3) == set(P3)
    assert all("reasoning" not in r["response"] for r in journal(plain_run))
    page = (out / "report.html").read_text()
    assert re.search(r"<b>8</b><span>answers with reasoning set aside</span>", page)
    assert "answers with reasoning" not in (plain_run / "report.html").read_text()
    rows = _embedded_rows(page)
    assert {row["id"]: row["th"] for row in rows} == {
        r["id"]: r["response"]["reasoning"] for r in records}  # short: shown whole
    assert all("th" not in row for row in _embedded_rows((plain_run / "report.html")
                                                         .read_text()))


def _embedded_rows(page: str) -> list[dict]:
    match = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', page,
                      re.DOTALL)
    assert match is not None
    return json.loads(match.group(1).replace("<\\/", "</"))["rows"]


def test_cut_while_thinking_is_an_error_of_its_own_left_out_of_the_scores(
        serve, synth_data, tmp_path, plain_run, monkeypatch):
    out = tmp_path / "run"
    # One checkpoint throughout (the server's script changes below only to stand in for
    # the same model given room to finish).
    server = serve(answer=answer_popout, thinking=Thinking("inline", cut=True), fail_first=2,
                   faults=("500",), checkpoint="qwen3-vl-thinking")
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                   "--max-attempts", "3", "--concurrency", "1"))
    assert result.exit_code == 1
    assert server.stats.requests == 8 + 2  # the cut replies were not retried; the 500s were
    records = journal(out)
    assert [error_reason(r["response"]["error"]) for r in records] == [OUT_OF_TOKENS] * 8
    assert all(r["scores"] == {} and r["parsed"] == {} for r in records)
    strict = load(out)["P3"]["strict"]
    assert (strict["n"], strict["n_errors"]) == (0, 8)
    info = load(out, "run.json")
    assert info["sessions"][0]["error_reasons"] == {OUT_OF_TOKENS: 8}
    assert info["counts"]["errors"] == 8
    assert f"     8 x {OUT_OF_TOKENS}" in result.stderr.split("most common error reasons")[1]
    assert "8 of them spent all of --max-tokens" in flat(result.stderr)
    # Given the tokens to finish (here: the server stops cutting), a resume scores them all
    # exactly as the plain answers; nothing of the failed attempts was cached.
    server.script.thinking = Thinking("inline")
    result = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                    server.base_url + "/v1")
    assert result.exit_code == 0, result.output
    assert load(out) == load(plain_run)


def test_cut_replies_of_every_protocol_are_the_same_error(serve, synth_data, tmp_path,
                                                          monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "any")
    server = serve(answer=answer_popout, thinking=Thinking("field", cut=True))
    reasons = {}
    for backend in ("openai", "anthropic", "ollama"):
        out = tmp_path / backend
        result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                       "--num-samples", "2", backend=backend))
        assert result.exit_code == 1, result.output
        reasons[backend] = load(out, "run.json")["sessions"][0]["error_reasons"]
    assert reasons == {b: {OUT_OF_TOKENS: 2} for b in ("openai", "anthropic", "ollama")}


def test_a_reply_that_mentions_think_is_left_as_it_is(serve, synth_data, tmp_path):
    said = "size (models that reason write <think> before they answer)"
    server = serve(answer=answer_fixed(said))
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3"))
    assert result.exit_code == 0, result.output
    records = journal(out)
    assert len(records) == 8
    assert all(r["response"]["text"] == said and "reasoning" not in r["response"]
               for r in records)
    assert all(r["parsed"]["lenient"] == ["size"] for r in records)
    assert load(out, "run.json")["counts"]["answers_with_reasoning"] == 0


@pytest.mark.slow
def test_report_and_view_show_a_long_reasoning_as_escaped_text(serve, synth_data, tmp_path):
    hostile = "<img src=x onerror=alert(1)></script><b>bold</b>"
    long_thought = f"FIRST {hostile} " + "and then some more weighing. " * 200 + "LAST"

    def reply(protocol, body, prompt):
        return {"choices": [{"finish_reason": "stop", "message": {
            "role": "assistant", "content": f"<think>{long_thought}</think>size"}}]}

    server = serve(reply=reply)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                   "--num-samples", "2"))
    assert result.exit_code == 0, result.output
    assert [r["response"]["reasoning"] for r in journal(out)] == [long_thought] * 2
    page = (out / "report.html").read_text()
    assert "</script><b>" not in page and "<b>bold</b>" not in page  # data, never markup
    rows = _embedded_rows(page)
    assert [row["th"] for row in rows] == [excerpt(long_thought)] * 2
    assert rows[0]["th"].startswith(f"FIRST {hostile}") and rows[0]["th"].endswith("LAST")
    assert "characters left out" in rows[0]["th"]
    viewed = asyncio.run(_view(out, rows[0]["id"]))
    assert [row["th"] for row in viewed["rows"]] == [excerpt(long_thought)] * 2
    assert viewed["record"]["response"]["reasoning"] == long_thought
    assert viewed["record"]["response"]["text"] == "size"
    if CHROMIUM:
        _check_in_chromium(out / "report.html", hostile)


async def _view(run: Path, sample_id: str) -> dict:
    """`visioneval view`'s server on a free port, asked over HTTP."""
    from visioneval.io.local_server import listen
    from visioneval.report.viewer import Viewer, serve

    urls: list[str] = []
    task = asyncio.create_task(serve(Viewer.open(run), listen(0), urls.append))
    try:
        while not urls:
            if task.done():  # it failed to start: say why instead of waiting forever
                task.result()
            await asyncio.sleep(0.01)
        async with aiohttp.ClientSession() as session:
            async with session.get(urls[0] + "api/rows") as got:
                rows = await got.json()
            async with session.get(urls[0] + f"api/record/{sample_id}") as got:
                record = await got.json(content_type=None)
        return {"rows": rows["rows"], "record": record}
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def _check_in_chromium(report: Path, hostile: str) -> None:
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update"])
        page = browser.new_page()
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("dialog", lambda d: (problems.append("dialog: " + d.message), d.dismiss()))
        page.goto(report.as_uri())
        first = page.locator(".sample").first
        first.locator("summary").click()
        assert first.locator("summary").inner_text() == "prompt, raw response and reasoning"
        shown = first.locator("pre.reasoning").inner_text()
        assert shown.startswith(f"reasoning, set aside before parsing:\nFIRST {hostile}")
        assert page.locator(".sample img[src='x'], .sample b").count() == 0
        browser.close()
    assert problems == []


# The loopback command -----------------------------------------------------------------------

def test_loopback_thinking_names(tmp_path):
    from visioneval.commands.loopback import build_script

    script = build_script(("m",), "popout", 0.0, 0.0, "500", 0, "field")
    assert script.thinking == Thinking("field")
    assert build_script(("m",), "popout", 0.0, 0.0, "500", 0).thinking is None
    result = invoke("loopback", "--port", "0", "--thinking", "deep")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("error: --thinking 'deep': use none, inline, closing, "
                                     "field, cut")
