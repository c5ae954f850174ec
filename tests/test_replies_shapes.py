"""Malformed and unusual reply shapes, one by one, through each backend over real HTTP."""

from __future__ import annotations

import asyncio
import logging

import pytest
from test_replies_fuzz import make, valid_reply

from visioneval.backends.base import PermanentError, TransientError
from visioneval.core.records import GenerationSettings, Request, user
from visioneval.loopback.server import Reply


def complete(server, protocol, *replies):
    """Each reply in turn through one backend; the last response."""
    async def go():
        async with make(protocol, server.base_url) as backend:
            for reply in replies:
                server.script.reply = lambda proto, body, prompt, reply=reply: Reply(reply)
                response = await backend.complete(Request((user("q"),), GenerationSettings()))
                assert response.text == "Color" or len(replies) == 1
            return response

    return asyncio.run(go())


def openai_with(**changes):
    reply = valid_reply("openai", "Color")
    choice = reply["choices"][0]
    for key, value in changes.items():
        if key in ("choices", "usage"):
            reply[key] = value
        elif key in ("finish_reason",):
            choice[key] = value
        elif key == "message":
            choice["message"] = value
        else:
            choice["message"][key] = value
    return reply


BROKEN = [
    ("openai", openai_with(choices=None), TransientError, "choices"),
    ("openai", openai_with(choices="abc"), TransientError, "choices"),
    ("openai", openai_with(choices=[]), TransientError, "choices"),
    ("openai", openai_with(message="hi"), TransientError, "message"),
    ("openai", openai_with(content=5), TransientError, "content"),
    ("openai", openai_with(content=None), TransientError, "content"),
    ("openai", openai_with(content=None, finish_reason="content_filter"), PermanentError,
     "content filter"),
    ("anthropic", {**valid_reply("anthropic", ""), "content": [{"type": "text", "text": None}]},
     TransientError, "text"),
    ("anthropic", {**valid_reply("anthropic", ""), "content": [{"type": "text", "text": 3}]},
     TransientError, "text"),
    ("anthropic", {**valid_reply("anthropic", ""), "content": None}, TransientError, "content"),
    ("anthropic", {**valid_reply("anthropic", ""), "content": [], "stop_reason": "refusal"},
     PermanentError, "refus"),
    ("ollama", {**valid_reply("ollama", ""), "message": {"role": "assistant", "content": 4}},
     TransientError, "content"),
    ("ollama", {**valid_reply("ollama", ""), "message": {"role": "assistant", "content": None}},
     TransientError, "content"),
]


@pytest.mark.parametrize(("protocol", "reply", "error", "says"), BROKEN)
def test_an_answer_that_is_not_text_is_an_error(serve, protocol, reply, error, says):
    server = serve(models=("m",))
    with pytest.raises(error, match=says) as info:
        complete(server, protocol, reply)
    assert "\n" not in str(info.value)


def test_bad_metadata_is_dropped_and_the_answer_kept(serve, caplog):
    server = serve(models=("m",))
    caplog.set_level(logging.WARNING, logger="visioneval")
    bad = openai_with(usage=[1, 2], finish_reason=3)
    response = complete(server, "openai", bad, bad, bad)
    assert response.text == "Color"
    assert response.prompt_tokens is None and response.finish_reason is None
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2, warnings  # usage and finish_reason, once each
    response = complete(server, "openai", openai_with(
        usage={"prompt_tokens": 12.0, "completion_tokens": 2.5}))
    assert response.text == "Color" and response.prompt_tokens == 12
    assert type(response.prompt_tokens) is int and response.completion_tokens is None
    response = complete(server, "anthropic", {**valid_reply("anthropic", "size"),
                                              "usage": "lots", "stop_reason": ["x"]})
    assert response.text == "size" and response.completion_tokens is None
    response = complete(server, "ollama", {**valid_reply("ollama", "size"), "eval_count": "9",
                                           "done_reason": {}})
    assert response.text == "size" and response.completion_tokens is None


def test_content_parts_and_empty_text_are_answers(serve):
    server = serve(models=("m",))
    parts = [{"type": "text", "text": "Col"}, {"type": "text", "text": "or"}]
    assert complete(server, "openai", openai_with(content=parts)).text == "Color"
    assert complete(server, "openai", openai_with(content="", finish_reason="length")).text == ""
