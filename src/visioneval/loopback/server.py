"""A loopback model server speaking the OpenAI, Ollama and Anthropic protocols.

It answers from a script (a fixed text, a deterministic class pick, the popout baseline, the
resolution probe's canary reader, scripted rubric judges (`loopback.judges`), or any Python
function), with optional latency, injected faults (429, 500, dropped connections, stalls)
and images reduced before the answer function sees them, as a provider that resizes does
(`loopback.resize`). Tests start it on 127.0.0.1; `visioneval loopback` serves it for trying
the tool without a model, and the speed benchmark drives it from another process.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
import pybase64
from aiohttp import web

from visioneval.baselines import popout
from visioneval.baselines.prompt_reading import choices, in_asked_format, vocabulary
from visioneval.io.images import ImageError, TooManyPixels
from visioneval.loopback import judges, resize
from visioneval.loopback.batches import BatchApis, BatchScript
from visioneval.probe import reader

FAULTS = ("429", "500", "drop", "stall")


@dataclass(frozen=True)
class Prompt:
    """What the server saw: the prompt text and the encoded images, in order."""

    text: str
    images: list[str]  # base64 payloads
    seed: int | None = None  # the request's sampling seed, if it sent one

    def last_image(self) -> bytes | None:
        return pybase64.b64decode(self.images[-1]) if self.images else None


Answerer = Callable[[Prompt], str]


@dataclass(frozen=True)
class Reply:
    """A scripted raw reply: a JSON value (or bytes, sent as they are) with any status."""

    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


Replier = Callable[[str, dict[str, Any], Prompt], Any]
"""(protocol: openai/ollama/anthropic, request body, prompt) -> the reply to send instead of
the protocol's own: a Reply, bytes, or any JSON value (status 200). For tests of odd servers."""


def answer_fixed(text: str) -> Answerer:
    def fixed(prompt: Prompt) -> str:
        return text

    fixed.__name__ = f"fixed:{text}"  # the checkpoint the server says it serves
    return fixed


def answer_hash(prompt: Prompt) -> str:
    """A deterministic option from the prompt's list (in the format the prompt asks for), by
    a checksum of text and image tail: cheap (no image decode) and stable across runs, so
    resumed and fresh runs agree."""
    options = choices(prompt.text)
    tail = prompt.images[-1][-256:] if prompt.images else ""
    pick = options[zlib.crc32((prompt.text + tail).encode()) % len(options)]
    return in_asked_format(prompt.text, pick)


def answer_popout(prompt: Prompt) -> str:
    image = prompt.last_image()
    return popout.answer(prompt.text, image) if image else vocabulary(prompt.text)[0]


def answer_judge(prompt: Prompt) -> str:
    """A rubric judge's JSON verdict: the dimensions the prompt asks for, each scored by a
    checksum of the prompt (deterministic, 4-10), empty detail lists. For trying
    `visioneval evaluate` without a judge model; it does not look at anything."""
    keys = judges.SCORE_KEY.findall(prompt.text)
    if not keys:
        return judges.REFUSAL
    scores = {k: 4 + zlib.crc32((prompt.text + k).encode()) % 7 for k in keys}
    details: dict[str, list[str]] = {k: [] for k in judges.DETAIL_KEY.findall(prompt.text)}
    return json.dumps({"reasoning": "Scripted loopback judge: scores are a checksum of the "
                       "prompt, not a judgement.", "scores": scores, "details": details})


def answer_canary(prompt: Prompt) -> str:
    """The resolution probe's question answered by the canary reader (`probe.reader`),
    which looks at the pixels it receives only; any other prompt as `answer_popout`."""
    image = prompt.last_image()
    if image is None or not reader.is_canary_question(prompt.text):
        return answer_popout(prompt)
    return reader.read(image)


ANSWER_MODES: dict[str, Answerer] = {"hash": answer_hash, "popout": answer_popout,
                                     "judge": answer_judge, "canary": answer_canary,
                                     "judge-sees": judges.judge_sees,
                                     "judge-first": judges.judge_first,
                                     "judge-no-counts": judges.judge_no_counts,
                                     "judge-varies": judges.judge_varies}
SEEDED_MODES: dict[str, Callable[[int], Answerer]] = {"judge-noise": judges.judge_noise}
"""Modes that draw at random: each server makes its own answerer from its seed, so two
servers never share (or race for) one random stream."""


def musing(prompt: Prompt) -> str:
    """A reasoning model's thinking before it answers: a paragraph naming every option the
    prompt offers, so a parser that read it would find them all."""
    options = choices(prompt.text)
    steps = "\n".join(f"Could it be {o}? The image might differ in {o}, but I should "
                      "look again before I decide." for o in options)
    return (f"The question offers {', '.join(options)}. Let me weigh each one.\n{steps}\n"
            "Having looked at every option, I will answer with the one that stands out.")


@dataclass(frozen=True)
class Thinking:
    """Answer as a reasoning model does: `musing` first, then the script's answer.

    `where` the musing goes: "inline" writes `<think>musing</think>` before the answer in
    the reply text; "closing" only `musing</think>` (the chat template opened the tag);
    "field" puts it where each protocol's server does: `openai_field` of the message
    (vLLM, SGLang, DeepSeek: reasoning_content; OpenRouter, newer vLLM: reasoning),
    Anthropic thinking blocks, Ollama's `message.thinking`. `cut`: max_tokens runs out while
    thinking: no answer, finish reason "length" (Anthropic: "max_tokens"), inline text an
    unclosed `<think>`."""

    where: Literal["inline", "closing", "field"] = "inline"
    cut: bool = False
    openai_field: Literal["reasoning_content", "reasoning"] = "reasoning_content"

    def text(self, thought: str, answer: str) -> str:
        """The reply text (the answer part of a "field" reply)."""
        if self.where == "field":
            return "" if self.cut else answer
        opened = "<think>" if self.where == "inline" else ""
        return f"{opened}{thought}" if self.cut else f"{opened}{thought}</think>\n\n{answer}"


THINKING_MODES = {"inline": Thinking("inline"), "closing": Thinking("closing"),
                  "field": Thinking("field"), "cut": Thinking("inline", cut=True)}
"""`visioneval loopback --thinking` names."""


@dataclass
class ServerScript:
    """How the server behaves. The first `fail_first` chat requests, then a `fail_rate` share
    of the rest, get a fault drawn from `faults`."""

    models: tuple[str, ...] = ("m",)
    answer: Answerer = answer_hash
    latency_s: float = 0.0
    fail_rate: float = 0.0
    fail_first: int = 0
    faults: tuple[str, ...] = ("429", "500", "drop")
    retry_after_s: float | None = 0.0
    required_key: str | None = None
    seed: int = 0
    list_models: bool = True
    reply: Replier | None = None
    # A hosted API's limit: chat requests beyond this many at a time are answered 429 (with
    # `retry_after_s`), as a provider that counts concurrent requests does.
    max_in_flight: int | None = None
    # A hosted API's own account of what each request cost (OpenRouter's `usage.cost`), in
    # US dollars, on OpenAI-style replies; None: no cost in the reply, as most servers.
    cost_usd: float | None = None
    # What the server says it serves, as vLLM does (`root` in /v1/models, a digest in
    # Ollama's /api/tags): by default "loopback/<answer function>", so two servers that
    # answer differently are two models; "" says nothing (as LM Studio or a proxy).
    checkpoint: str | None = None
    # Answer as a reasoning model (None: a plain model, thinking nothing).
    thinking: Thinking | None = None
    # What a provider does to images before its model looks (`loopback.resize`, Lanczos):
    # each side divided by `downscale`, then a long edge over `max_side` brought down to it
    # (Anthropic: 1568). The answer function (and `reply`) sees the reduced PNG.
    downscale: float | None = None
    max_side: int | None = None
    # The emulated batch APIs (`loopback.batches`): delay, errored requests, expiry.
    batches: BatchScript = field(default_factory=BatchScript)

    def __post_init__(self) -> None:
        resize.check(self.downscale, self.max_side)

    def resizes(self) -> bool:
        return (self.downscale is not None and self.downscale != 1.0) or \
            self.max_side is not None

    def served_checkpoint(self) -> str:
        """The checkpoint named in the model list: what makes its answers what they are
        (the answer function, and thinking first, which changes the reply's text)."""
        if self.checkpoint is not None:
            return self.checkpoint
        name = "loopback/" + getattr(self.answer, "__name__", type(self.answer).__name__)
        if self.thinking is not None:
            cut = "-cut" if self.thinking.cut else ""
            name += f"+thinking-{self.thinking.where}{cut}"
        if self.downscale is not None and self.downscale != 1.0:
            name += f"+downscale-{self.downscale:g}"
        if self.max_side is not None:
            name += f"+max-side-{self.max_side}"
        return name


@dataclass
class ServerStats:
    requests: int = 0
    faults: int = 0
    answered: int = 0
    bytes_in: int = 0
    seen_auth: set[str] = field(default_factory=set)
    last_query: str = ""  # the query string of the last request (tests of URL handling)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    keep_bodies: bool = False
    in_flight: int = 0
    most_in_flight: int = 0
    over_limit: int = 0  # 429s for max_in_flight
    arrivals: list[float] = field(default_factory=list)  # time.monotonic() of chat requests
    keep_arrivals: bool = False


def _openai_prompt(body: dict[str, Any]) -> Prompt:
    texts, images = [], []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content or []:
            if part.get("type") == "text":
                texts.append(part["text"])
            elif part.get("type") == "image_url":
                images.append(part["image_url"]["url"].split(",", 1)[-1])
    return Prompt("\n".join(texts), images, body.get("seed"))


def _ollama_prompt(body: dict[str, Any]) -> Prompt:
    texts: list[str] = []
    images: list[str] = []
    for message in body.get("messages", []):
        images += message.get("images") or []
        texts.append(message.get("content") or "")
    return Prompt("\n".join(texts), images, (body.get("options") or {}).get("seed"))


def _anthropic_prompt(body: dict[str, Any]) -> Prompt:
    texts, images = [], []
    for message in body.get("messages", []):
        content = message.get("content")
        blocks: list[dict[str, Any]] | None = (
            [{"type": "text", "text": content}] if isinstance(content, str) else content)
        for block in blocks or []:
            if block.get("type") == "text":
                texts.append(block["text"])
            elif block.get("type") == "image":
                images.append(block["source"]["data"])
    if isinstance(body.get("system"), str):
        texts.insert(0, body["system"])
    return Prompt("\n".join(texts), images)


def _openai_reply(model: str, text: str, prompt: Prompt) -> dict[str, Any]:
    usage = {"prompt_tokens": len(prompt.text) // 4 + 85 * len(prompt.images),
             "completion_tokens": max(1, len(text) // 4)}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return {"id": "chatcmpl-loopback", "object": "chat.completion", "created": int(time.time()),
            "model": model, "usage": usage,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}]}


def _ollama_reply(model: str, text: str, prompt: Prompt) -> dict[str, Any]:
    return {"model": model, "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "message": {"role": "assistant", "content": text}, "done": True,
            "done_reason": "stop", "prompt_eval_count": len(prompt.text) // 4,
            "eval_count": max(1, len(text) // 4)}


def _anthropic_reply(model: str, text: str, prompt: Prompt) -> dict[str, Any]:
    return {"id": "msg_loopback", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": len(prompt.text) // 4,
                      "output_tokens": max(1, len(text) // 4)}}


def _think(protocol: str, data: dict[str, Any], thinking: Thinking, thought: str) -> None:
    """Make a protocol's reply (built with `thinking.text`) a reasoning model's: the
    thinking in its own place when `where` is "field", the finish reason of a cut reply."""
    if protocol == "openai":
        choice = data["choices"][0]
        if thinking.where == "field":
            choice["message"][thinking.openai_field] = thought
            if thinking.cut:
                choice["message"]["content"] = None  # vLLM: no answer text at all
        if thinking.cut:
            choice["finish_reason"] = "length"
    elif protocol == "ollama":
        if thinking.where == "field":
            data["message"]["thinking"] = thought
        if thinking.cut:
            data["done_reason"] = "length"
    else:
        if thinking.where == "field":
            answer = [] if thinking.cut else data["content"]
            data["content"] = [{"type": "thinking", "thinking": thought,
                                "signature": "loopback"}, *answer]
        if thinking.cut:
            data["stop_reason"] = "max_tokens"


PROTOCOLS = {
    "/v1/chat/completions": ("openai", _openai_prompt, _openai_reply),
    "/api/chat": ("ollama", _ollama_prompt, _ollama_reply),
    "/v1/messages": ("anthropic", _anthropic_prompt, _anthropic_reply),
}


class LoopbackServer:
    def __init__(self, script: ServerScript | None = None):
        self.script = script or ServerScript()
        self.stats = ServerStats()
        self._rng = random.Random(self.script.seed)
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None
        self.port = 0
        self.batch_apis = BatchApis(self)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def app(self) -> web.Application:
        app = web.Application(client_max_size=1 << 30)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/api/tags", self._tags)
        for path in PROTOCOLS:
            app.router.add_post(path, self._chat)
        self.batch_apis.routes(app)
        return app

    async def start(self, port: int = 0, host: str = "127.0.0.1") -> int:
        self._closing = asyncio.Event()
        self._runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self.port

    async def stop(self) -> None:
        if self._closing is not None:
            self._closing.set()  # releases stalled requests
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    @property
    def batch_script(self) -> BatchScript:
        return self.script.batches

    def authorized(self, request: web.Request) -> bool:
        """Whether the request carries the key the script requires (None: any or none)."""
        return self._authorized(request)

    def _authorized(self, request: web.Request) -> bool:
        self.stats.last_query = request.query_string
        auth = request.headers.get("Authorization", "")
        key = auth.removeprefix("Bearer ") if auth else request.headers.get("x-api-key", "")
        if key:
            self.stats.seen_auth.add(key)
        return self.script.required_key is None or key == self.script.required_key

    async def _models(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return web.json_response({"error": {"message": "invalid key"}}, status=401)
        if not self.script.list_models:
            return web.json_response({"error": "not found"}, status=404)
        root = self.script.served_checkpoint()
        return web.json_response({"object": "list", "data": [
            {"id": m, "object": "model", "owned_by": "loopback", **({"root": root} if root
                                                                    else {})}
            for m in self.script.models]})

    async def _tags(self, request: web.Request) -> web.Response:
        root = self.script.served_checkpoint()
        digest = {"digest": hashlib.sha256(root.encode()).hexdigest()} if root else {}
        return web.json_response({"models": [{"name": m, "model": m, **digest}
                                             for m in self.script.models]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        stats = self.stats
        stats.requests += 1
        if stats.keep_arrivals:
            stats.arrivals.append(time.monotonic())
        limit = self.script.max_in_flight
        if limit is not None and stats.in_flight >= limit:
            stats.over_limit += 1
            return await self._fault(request, "429")
        stats.in_flight += 1
        stats.most_in_flight = max(stats.most_in_flight, stats.in_flight)
        try:
            return await self._answer(request)
        finally:
            stats.in_flight -= 1

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        self.stats.bytes_in += len(raw)
        if not self._authorized(request):
            return web.json_response({"error": {"message": "invalid key"}}, status=401)
        body = orjson.loads(raw)
        if self.stats.keep_bodies:
            self.stats.bodies.append(body)
        if self.script.latency_s:
            await asyncio.sleep(self.script.latency_s)
        if body.get("model") not in self.script.models:
            return web.json_response({"error": {"message": f"model {body.get('model')!r} "
                                                           "not found"}}, status=404)
        if self.stats.requests <= self.script.fail_first or (
                self.script.fail_rate and self._rng.random() < self.script.fail_rate):
            self.stats.faults += 1
            return await self._fault(request, self._rng.choice(self.script.faults))
        protocol, parse_prompt, reply = PROTOCOLS[request.path]
        prompt = parse_prompt(body)
        if self.script.resizes():
            try:  # decoding and resampling take milliseconds: off the event loop
                prompt = await asyncio.to_thread(_resized, prompt, self.script.downscale,
                                                 self.script.max_side)
            except ImageError as exc:  # as a real server refuses an image it cannot read
                return web.json_response({"error": {"message": str(exc)}}, status=400)
        if self.script.reply is not None:
            return _scripted(self.script.reply(protocol, body, prompt))
        try:
            text = self.script.answer(prompt)
        except TooManyPixels as exc:  # as a real server refuses an image it will not decode
            return web.json_response({"error": {"message": str(exc)}}, status=400)
        self.stats.answered += 1
        data = self._reply_data(protocol, reply, body, prompt, text)
        return web.Response(body=orjson.dumps(data), content_type="application/json")

    def _reply_data(self, protocol: str, reply: Callable[[str, str, Prompt], dict[str, Any]],
                    body: dict[str, Any], prompt: Prompt, text: str) -> dict[str, Any]:
        thinking = self.script.thinking
        if thinking is None:
            data = reply(body["model"], text, prompt)
        else:
            thought = musing(prompt)
            data = reply(body["model"], thinking.text(thought, text), prompt)
            _think(protocol, data, thinking, thought)
        if self.script.cost_usd is not None and protocol == "openai":
            data["usage"]["cost"] = self.script.cost_usd
        if protocol == "openai" and body.get("logprobs"):
            data["choices"][0]["logprobs"] = _logprobs(self.script.answer, prompt, text,
                                                       int(body.get("top_logprobs") or 0))
        return data

    def answer_body(self, protocol: Literal["openai", "anthropic"],
                    body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(status, reply body) for one request of a batch, as the chat path would answer
        it (without its faults and latency: the batch APIs script their own)."""
        if body.get("model") not in self.script.models:
            return 404, {"error": {"message": f"model {body.get('model')!r} not found"}}
        _, parse_prompt, reply = PROTOCOLS[
            "/v1/chat/completions" if protocol == "openai" else "/v1/messages"]
        prompt = parse_prompt(body)
        try:
            if self.script.resizes():
                prompt = _resized(prompt, self.script.downscale, self.script.max_side)
            text = self.script.answer(prompt)
        except (ImageError, TooManyPixels) as exc:
            return 400, {"error": {"message": str(exc)}}
        self.stats.answered += 1
        return 200, self._reply_data(protocol, reply, body, prompt, text)

    async def _fault(self, request: web.Request, fault: str) -> web.StreamResponse:
        if fault == "429":
            headers = {}
            if self.script.retry_after_s is not None:
                headers["Retry-After"] = f"{self.script.retry_after_s:g}"
            return web.json_response({"error": {"message": "rate limited"}}, status=429,
                                     headers=headers)
        if fault == "500":
            return web.json_response({"error": {"message": "internal error"}}, status=500)
        if fault == "stall" and self._closing is not None:
            await self._closing.wait()
        # "drop": close the connection without an answer.
        if request.transport is not None:
            request.transport.abort()
        raise asyncio.CancelledError


def _first_token(text: str) -> str:
    """The answer's first token as a tokenizer might cut it: its first word."""
    return (text.split() or [""])[0]


def _logprobs(answer: Answerer, prompt: Prompt, text: str, top: int) -> dict[str, Any]:
    """OpenAI's `logprobs` for the answer's first token: the answer function's own chances
    of each answer when it has them (`distribution`, as the varying model does), else the
    answer given with probability 1."""
    distribution = getattr(answer, "distribution", None)
    chances = distribution(prompt) if distribution is not None else {text: 1.0}
    alternatives = sorted(((_first_token(t), math.log(p)) for t, p in chances.items() if p > 0),
                          key=lambda pair: -pair[1])[:max(top, 1)]
    first = _first_token(text)
    given = next((lp for token, lp in alternatives if token == first), 0.0)
    return {"content": [{"token": first, "logprob": given,
                         "top_logprobs": [{"token": t, "logprob": lp}
                                          for t, lp in alternatives] if top else []}]}


def _resized(prompt: Prompt, downscale: float | None, max_side: int | None) -> Prompt:
    """The prompt with each image reduced (`resize.resized`), as base64 PNG."""
    images = []
    for encoded in prompt.images:
        small = resize.resized(pybase64.b64decode(encoded), downscale, max_side)
        images.append(encoded if small is None else pybase64.b64encode(small).decode("ascii"))
    return Prompt(prompt.text, images, prompt.seed)


def _scripted(reply: Any) -> web.Response:
    if not isinstance(reply, Reply):
        reply = Reply(reply)
    data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
    return web.Response(body=data, status=reply.status, headers=reply.headers,
                        content_type="application/json")


class ThreadedServer:
    """Runs a LoopbackServer on its own event loop in a thread, for synchronous tests."""

    def __init__(self, script: ServerScript | None = None):
        self.server = LoopbackServer(script)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self._loop).result(10)
        return self.server

    def pause(self) -> None:
        """Stop listening (connections are refused) until `unpause`; stats are kept."""
        asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result(10)

    def unpause(self) -> None:
        """Listen again on the same port."""
        port = self.server.port
        asyncio.run_coroutine_threadsafe(self.server.start(port), self._loop).result(10)

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()
