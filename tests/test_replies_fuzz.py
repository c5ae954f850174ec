"""Malformed 200 replies of every protocol through the real engine and the loopback server:
each sample ends scored from a real text answer or as an error with a one-line reason."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import random
import re

import orjson
import pytest

from visioneval.backends.anthropic import AnthropicBackend
from visioneval.backends.ollama import OllamaBackend
from visioneval.backends.openai import OpenAIBackend
from visioneval.core.records import GenerationSettings, Sample, user
from visioneval.core.runfiles import BackendInfo, RunInfo
from visioneval.core.store import RunStore
from visioneval.engine.progress import RunProgress
from visioneval.engine.retry import RetryPolicy
from visioneval.engine.runner import Engine, RunStats
from visioneval.loopback.server import Reply

N = 300
POLICY = RetryPolicy(max_attempts=2, timeout_s=10.0, backoff_base_s=0.0, backoff_cap_s=0.0)


def valid_reply(protocol: str, text: str) -> dict:
    if protocol == "openai":
        return {"id": "x", "object": "chat.completion", "model": "m",
                "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}]}
    if protocol == "ollama":
        return {"model": "m", "message": {"role": "assistant", "content": text}, "done": True,
                "done_reason": "stop", "prompt_eval_count": 10, "eval_count": 2}
    return {"id": "msg", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 2}}


ANSWER = {"openai": ("choices", 0, "message", "content"), "ollama": ("message", "content"),
          "anthropic": ("content", 0, "text")}
META = {
    "openai": [("usage",), ("usage", "prompt_tokens"), ("usage", "completion_tokens"),
               ("choices", 0, "finish_reason")],
    "ollama": [("done_reason",), ("prompt_eval_count",), ("eval_count",)],
    "anthropic": [("usage",), ("usage", "input_tokens"), ("usage", "output_tokens"),
                  ("stop_reason",)],
}


def garbage(rng: random.Random, depth: int = 0, text: bool = True):
    """A random JSON value: wrong types at every level, nulls, nested junk."""
    kinds = ["null", "bool", "int", "float", "list", "dict"] + (["str"] if text else [])
    if depth > 2:
        kinds = [k for k in kinds if k not in ("list", "dict")]
    kind = rng.choice(kinds)
    if kind == "null":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice([0, -1, 7, 2**70])
    if kind == "float":
        return rng.choice([0.5, 3.0, -2.25, 1e308])
    if kind == "str":
        return rng.choice(["", "x", "stop", "🙂"])
    if kind == "list":
        return [garbage(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {f"k{i}": garbage(rng, depth + 1) for i in range(rng.randint(0, 3))}


def paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths(v, (*prefix, i))


def at(obj, path):
    for step in path:
        obj = obj[step]
    return obj


def put(obj, path, value, delete=False):
    if not path:
        return value
    parent = obj
    for step in path[:-1]:
        parent = parent[step]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return obj


def malformed(protocol: str, i: int) -> tuple[object, str, str]:
    """(reply body, category, marker) for case i; the same every time it is asked."""
    rng = random.Random(f"{protocol}/{i}")
    marker = f"ANSWER-{i}"
    reply = valid_reply(protocol, marker)
    category = rng.choice(["meta", "meta", "answer", "any", "any", "body"])
    if category == "meta":
        for path in rng.sample(META[protocol], rng.randint(1, len(META[protocol]))):
            with contextlib.suppress(KeyError, IndexError, TypeError):  # parent replaced
                reply = put(reply, path, garbage(rng), delete=rng.random() < 0.2)
    elif category == "answer":
        # Never a string, and for OpenAI never a list (content parts are a valid shape).
        value = garbage(rng, text=False)
        while protocol == "openai" and isinstance(value, list):
            value = garbage(rng, text=False)
        reply = put(reply, ANSWER[protocol], value, delete=rng.random() < 0.2)
    elif category == "any":
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(list(paths(reply))[1:] or [()])
            reply = put(reply, path, garbage(rng), delete=rng.random() < 0.3)
    else:
        reply = rng.choice([garbage(rng), b"not json", b'{"choices": [', b"", b"null"])
    return reply, category, marker


def replier(protocol, body, prompt):
    i = int(re.search(r"case (\d+)", prompt.text).group(1))
    return Reply(malformed(protocol, i)[0])


def make(protocol: str, base_url: str):
    if protocol == "openai":
        return OpenAIBackend("m", base_url + "/v1", api_key=None, api_key_env=None)
    if protocol == "ollama":
        return OllamaBackend("m", base_url)
    return AnthropicBackend("m", base_url, api_key=None, api_key_env=None)


def run_engine(backend, tmp_path, n: int):
    store = RunStore.create(tmp_path / "run", RunInfo(
        benchmark="salbench", backend=BackendInfo(kind="builtin", model="random")))
    engine = Engine(backend, store, GenerationSettings(), POLICY, concurrency=16)
    samples = [Sample(id=f"s{i}", group="g", messages=(user(f"case {i}"),), target=None)
               for i in range(n)]

    def scorer(sample, text):
        return {"text": text}, {"m": {"x": 1.0}}

    async def go():
        async with backend:
            with RunProgress(n, "fuzz", enabled=False) as progress:
                await engine.run(samples, scorer, progress, set(), RunStats())

    asyncio.run(go())
    store.close()
    return {r.id: r for r in store.latest_records()}


@pytest.mark.parametrize("protocol", ["openai", "ollama", "anthropic"])
def test_malformed_replies_end_scored_or_as_one_line_errors(serve, tmp_path, protocol,
                                                            caplog):
    server = serve(models=("m",), reply=replier)
    caplog.set_level(logging.WARNING, logger="visioneval")
    records = run_engine(make(protocol, server.base_url), tmp_path, N)
    assert len(records) == N  # nothing escaped: every sample has its record
    seen = set()
    for i in range(N):
        record = records[f"s{i}"]
        reply, category, marker = malformed(protocol, i)
        seen.add(category)
        response = record.response
        if response.ok:  # the text found where the protocol puts the answer, and only that
            assert response.text == at(reply, ANSWER[protocol]), (category, reply, response)
            assert isinstance(response.text, str) and record.parsed == {"text": response.text}
        else:
            assert response.text is None and record.scores == {}
            assert response.error and "\n" not in response.error and len(response.error) < 600
        if category == "meta":
            assert response.ok and response.text == marker, (reply, response.error)
            assert response.prompt_tokens is None or type(response.prompt_tokens) is int
            assert response.finish_reason is None or isinstance(response.finish_reason, str)
        if category == "answer":
            assert not response.ok, (reply, response)
    assert seen == {"meta", "answer", "any", "body"}
    # Dropped metadata is said once per kind, not once per sample.
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings and len(warnings) <= 12, warnings
    assert len(set(warnings)) == len(warnings)


def test_fuzz_reply_generator_is_deterministic():
    assert orjson.dumps(malformed("openai", 5)[0]) == orjson.dumps(malformed("openai", 5)[0])
    assert copy.deepcopy(valid_reply("ollama", "a")) == valid_reply("ollama", "a")
