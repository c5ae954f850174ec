"""Every backend against the loopback server over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio

import pybase64
import pytest
from helpers import make_image

from visioneval.backends.base import PermanentError, PreflightError, TransientError
from visioneval.backends.ollama import OllamaBackend
from visioneval.backends.openai import OpenAIBackend
from visioneval.backends.registry import BackendSpec, make_backend
from visioneval.core.records import GenerationSettings, Request, user

PROMPT = "Given this list ... feature integration theory: Orientation, Color, Size. Which?"


def request(*parts, **settings):
    return Request((user(*parts),), GenerationSettings(**settings))


def run(coro):
    return asyncio.run(coro)


async def _complete(backend, req):
    async with backend:
        await backend.preflight()
        return await backend.complete(req)


def test_openai_sends_stored_bytes_and_reads_the_answer(serve):
    server = serve(models=("m",), answer=lambda p: "Color")
    server.stats.keep_bodies = True
    image = make_image()
    backend = OpenAIBackend("m", server.base_url + "/v1", api_key=None, api_key_env=None)
    response = run(_complete(backend, request(image, PROMPT, max_tokens=7)))
    assert response.text == "Color" and response.finish_reason == "stop"
    assert response.prompt_tokens and response.completion_tokens
    body = server.stats.bodies[0]
    assert body["model"] == "m" and body["max_tokens"] == 7 and body["temperature"] == 0.0
    parts = body["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["image_url", "text"]
    url = parts[0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert pybase64.b64decode(url.split(",", 1)[1]) == image.data  # not re-encoded


def test_ollama_native_chat_splits_interleaved_prompt(serve):
    server = serve(models=("llava:7b",), answer=lambda p: "size")
    server.stats.keep_bodies = True
    a, b = make_image((10, 200, 10)), make_image((10, 10, 200))
    backend = OllamaBackend("llava", server.base_url)  # ":latest" is implied
    with pytest.raises(PreflightError, match="not pulled"):
        run(_complete(backend, request(a, "x")))
    backend = OllamaBackend("llava:7b", server.base_url)
    response = run(_complete(backend, request("intro", a, "example", b, PROMPT, max_tokens=9)))
    assert response.text == "size"
    body = server.stats.bodies[-1]
    assert body["stream"] is False and body["options"] == {"temperature": 0.0, "num_predict": 9}
    messages = body["messages"]
    assert [m["content"] for m in messages] == ["intro", "example", PROMPT]
    assert "images" not in messages[0]
    assert pybase64.b64decode(messages[1]["images"][0]) == a.data
    assert pybase64.b64decode(messages[2]["images"][0]) == b.data


def test_anthropic_messages_api(serve, monkeypatch):
    server = serve(models=("claude-x",), answer=lambda p: "orientation", required_key="ak-1")
    server.stats.keep_bodies = True
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-1")
    backend = make_backend(BackendSpec(kind="anthropic", model="claude-x",
                                       base_url=server.base_url,
                                       api_key_env="ANTHROPIC_API_KEY"))
    response = run(_complete(backend, request(make_image(), PROMPT)))
    assert response.text == "orientation"
    block = server.stats.bodies[0]["messages"][0]["content"][0]
    assert block["type"] == "image" and block["source"]["media_type"] == "image/png"


def test_preflight_unreachable_server_is_one_clear_line():
    backend = OpenAIBackend("m", "http://127.0.0.1:9/v1", api_key=None, api_key_env=None)
    with pytest.raises(PreflightError, match=r"cannot reach openai server at http://127.0.0.1:9"):
        run(_complete(backend, request("x")))


def test_preflight_unknown_model_lists_what_is_served(serve):
    server = serve(models=("a", "b"))
    backend = OpenAIBackend("zzz", server.base_url + "/v1", api_key=None, api_key_env=None)
    with pytest.raises(PreflightError, match=r"model 'zzz' is not served .* \(it lists: a, b\)"):
        run(_complete(backend, request("x")))


def test_preflight_rejected_key_names_the_variable(serve, monkeypatch):
    server = serve(models=("m",), required_key="right")
    monkeypatch.setenv("MY_KEY", "wrong")
    backend = make_backend(BackendSpec(kind="openai", model="m", base_url=server.base_url + "/v1",
                                       api_key_env="MY_KEY"))
    with pytest.raises(PreflightError, match=r"HTTP 401.*\$MY_KEY"):
        run(_complete(backend, request("x")))


def test_missing_key_for_hosted_api_and_for_explicit_variable():
    with pytest.raises(PreflightError, match=r"missing API key: set \$OPENROUTER_API_KEY"):
        make_backend(BackendSpec(kind="openai", model="m",
                                 base_url="https://openrouter.ai/api/v1"))
    with pytest.raises(PreflightError, match=r"missing API key: set \$OPENAI_API_KEY"):
        make_backend(BackendSpec(kind="openai", model="m"))
    with pytest.raises(PreflightError, match=r"\$NOPE_KEY"):
        make_backend(BackendSpec(kind="ollama", model="m", api_key_env="NOPE_KEY"))


def test_http_errors_are_classified(serve):
    server = serve(models=("m",), fail_first=1, faults=("429",), retry_after_s=2.5)
    backend = OpenAIBackend("m", server.base_url + "/v1", api_key=None, api_key_env=None)

    async def go():
        async with backend:
            with pytest.raises(TransientError) as info:
                await backend.complete(request("x"))
            assert info.value.retry_after == 2.5
            bad = OpenAIBackend("nope", server.base_url + "/v1", api_key=None, api_key_env=None)
            async with bad:
                with pytest.raises(PermanentError, match="HTTP 404"):
                    await bad.complete(request("x"))

    run(go())


def test_dropped_connection_is_transient(serve):
    server = serve(models=("m",), fail_first=1, faults=("drop",))
    backend = OpenAIBackend("m", server.base_url + "/v1", api_key=None, api_key_env=None)

    async def go():
        async with backend:
            with pytest.raises(TransientError, match="connection failed"):
                await backend.complete(request("x"))
            return await backend.complete(request(PROMPT))

    assert run(go()).ok


def test_spliced_body_is_exactly_the_json_of_the_payload():
    import orjson

    from visioneval.backends import body

    a, b = make_image((1, 2, 3)), make_image((9, 8, 7), size=(5, 5))
    payload = {"text": 'quotes " and \\ and ünïcode', "parts": [body.data_url(a), body.Blob(b)],
               "n": 1.5}
    expected = orjson.dumps({"text": payload["text"], "parts": [a.data_url(), b.base64()],
                             "n": 1.5})
    assert body.dumps(payload) == expected
    assert body.dumps({"x": 1}) == b'{"x":1}'


def test_openai_api_gets_max_completion_tokens_others_max_tokens():
    req = request("x", max_tokens=5)
    hosted = OpenAIBackend("o3", "https://api.openai.com/v1", api_key="k", api_key_env="K")
    assert hosted.chat_payload(req)["max_completion_tokens"] == 5
    assert "max_tokens" not in hosted.chat_payload(req)
    local = OpenAIBackend("m", "http://127.0.0.1:1/v1", api_key=None, api_key_env=None)
    assert local.chat_payload(req)["max_tokens"] == 5


def test_server_that_rejects_max_tokens_gets_max_completion_tokens(serve):
    from visioneval.loopback.server import Reply

    seen = []

    def reasoning_server(protocol, body, prompt):
        seen.append(sorted(k for k in body if "tokens" in k))
        if "max_tokens" in body:  # OpenAI's words for its reasoning models
            return Reply({"error": {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this "
                           "model. Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error", "param": "max_tokens",
                "code": "unsupported_parameter"}}, status=400)
        return {"choices": [{"finish_reason": "stop",
                             "message": {"role": "assistant", "content": "Size"}}]}

    server = serve(models=("m",), reply=reasoning_server)
    backend = OpenAIBackend("m", server.base_url + "/v1", api_key=None, api_key_env=None)

    async def go():
        async with backend:
            return [await backend.complete(request("x", max_tokens=9)) for _ in range(2)]

    assert [r.text for r in run(go())] == ["Size", "Size"]
    assert seen == [["max_tokens"], ["max_completion_tokens"], ["max_completion_tokens"]]
