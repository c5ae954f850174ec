"""Any OpenAI-compatible chat-completions server: OpenAI, OpenRouter, vLLM, SGLang, LM Studio,
Ollama's /v1. Request and response shapes are exactly those of the OpenAI API."""

from __future__ import annotations

import logging
import math
from typing import Any
from urllib.parse import urlsplit

from visioneval.backends import body, reasoning, replies
from visioneval.backends.base import PermanentError, PreflightError, TransientError
from visioneval.backends.http import RETRYABLE_STATUS, HttpBackend, HttpLimits
from visioneval.backends.keys import MODEL_FLAGS, TargetFlags, host_of
from visioneval.backends.replies import MetadataReader
from visioneval.backends.served import from_model_list
from visioneval.core.records import MAX_TOP_LOGPROBS, Message, Request, Response

DEFAULT_BASE_URL = "https://api.openai.com/v1"
log = logging.getLogger(__name__)


def openai_content(message: Message) -> str | list[dict[str, Any]]:
    """Plain text stays a string; anything with an image becomes ordered content parts."""
    if all(isinstance(p, str) for p in message.parts):
        return message.text()
    return [
        {"type": "text", "text": p} if isinstance(p, str)
        else {"type": "image_url", "image_url": {"url": body.data_url(p)}}
        for p in message.parts
    ]


def chat_payload(model: str, request: Request,
                 token_field: str = "max_tokens") -> dict[str, Any]:
    """The request body; `token_field` is max_tokens or max_completion_tokens (see below)."""
    settings = request.settings
    payload: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": openai_content(m)} for m in request.messages],
        "temperature": settings.temperature,
        token_field: settings.max_tokens,
    }
    if settings.seed is not None:
        payload["seed"] = settings.seed
    if settings.top_logprobs is not None:
        payload["logprobs"] = True
        payload["top_logprobs"] = settings.top_logprobs
    return payload


def asks_for_cost(base_url: str) -> bool:
    """OpenRouter reports each request's cost in `usage.cost`. Its older API did so only
    when asked with `"usage": {"include": true}`; the current one always does and ignores
    the flag. Only OpenRouter gets it: OpenAI rejects unknown fields."""
    return host_of(base_url) == "openrouter.ai"


def token_field_for(base_url: str) -> str:
    """OpenAI's own API takes max_completion_tokens for every chat model and its reasoning
    models (o1, o3, gpt-5 ...) reject max_tokens; other servers (vLLM, SGLang, Ollama,
    LM Studio, OpenRouter) know max_tokens, and some not the other."""
    return "max_completion_tokens" if host_of(base_url) == "api.openai.com" else "max_tokens"


def asks_for_max_completion_tokens(error: PermanentError) -> bool:
    """OpenAI's HTTP 400 for max_tokens: "Unsupported parameter: 'max_tokens' is not
    supported with this model. Use 'max_completion_tokens' instead." """
    text = str(error)
    return text.startswith("HTTP 400") and "max_tokens" in text and \
        "max_completion_tokens" in text


def parse_chat_response(data: Any, meta: MetadataReader) -> Response:
    """The one place an OpenAI-style reply is read: choices[0].message.content must be text
    (or text parts); an `error` object in a 200 body (OpenRouter does this) is an error.
    Reasoning, inline or in `reasoning_content`/`reasoning`, is set aside (`reasoning`)."""
    data = replies.body_object(data)
    if data.get("error"):
        error = data["error"]
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message", error) if isinstance(error, dict) else error
        message = message if isinstance(message, str) else replies.describe(message)
        if type(code) is int and (code in RETRYABLE_STATUS or code >= 500):
            raise TransientError(f"server error {code}: {message[:300]}")
        raise PermanentError(f"server error {code}: {message[:300]}")
    choices = data.get("choices", replies.MISSING)
    if not isinstance(choices, list) or not choices:
        raise replies.malformed("choices", choices)
    choice = choices[0]
    if not isinstance(choice, dict):
        raise replies.malformed("choices[0]", choice)
    finish = meta.text(choice.get("finish_reason"), "finish_reason")
    message = replies.object_at(choice, "message", "choices[0].message")
    content = message.get("content", replies.MISSING)
    usage = meta.mapping(data.get("usage"), "usage")
    answer = reasoning.settle(content_text(content), separate_reasoning(message, meta),
                              finish, spent=reasoning_tokens(usage, meta) > 0)
    if answer is None:
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal:
            raise PermanentError(f"the model refused: {refusal[:200]!r}")
        raise replies.no_answer("choices[0].message.content", content, finish,
                                "finish_reason")
    return Response(
        text=answer.answer,
        reasoning=answer.reasoning,
        finish_reason=finish,
        prompt_tokens=meta.count(usage.get("prompt_tokens"), "usage.prompt_tokens"),
        completion_tokens=meta.count(usage.get("completion_tokens"),
                                     "usage.completion_tokens"),
        cost_usd=reported_cost(usage, meta),
        first_token_logprobs=first_token_logprobs(choice.get("logprobs"), meta),
    )


MAX_TOKEN_CHARS = 64  # a first token longer than this is no option's letter or word


def first_token_logprobs(logprobs: Any, meta: MetadataReader) -> dict[str, float] | None:
    """`choices[0].logprobs.content[0].top_logprobs` as token -> log-probability (the
    sampled token itself when no alternatives came); None when the server sent none. Bounded:
    at most MAX_TOP_LOGPROBS tokens of at most MAX_TOKEN_CHARS, finite values at or below 0."""
    if logprobs is None:
        return None
    found = meta.mapping(logprobs, "choices[0].logprobs")
    content = found.get("content")
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        return None
    first = content[0]
    options = first.get("top_logprobs") or [first]
    out: dict[str, float] = {}
    for entry in options[:MAX_TOP_LOGPROBS] if isinstance(options, list) else ():
        token = entry.get("token") if isinstance(entry, dict) else None
        value = entry.get("logprob") if isinstance(entry, dict) else None
        if isinstance(token, str) and len(token) <= MAX_TOKEN_CHARS and \
                isinstance(value, int | float) and not isinstance(value, bool) and \
                math.isfinite(value) and value <= 0:
            out[token] = max(float(value), out.get(token, -math.inf))
    return out or None


def separate_reasoning(message: dict[str, Any], meta: MetadataReader) -> str | None:
    """Reasoning a server's parser moved out of the answer: `reasoning_content` (vLLM before
    0.11, SGLang, DeepSeek's API, llama.cpp) or `reasoning` (OpenRouter, vLLM since 0.11,
    which may send both with the same text); the first that has text."""
    for key in ("reasoning_content", "reasoning"):
        if key not in message:
            continue
        text = meta.text(message[key], f"message.{key}")
        if text and text.strip():
            return text
    return None


def reasoning_tokens(usage: dict[str, Any], meta: MetadataReader) -> int:
    """Reasoning tokens the server counted but did not send: OpenAI's o-series think
    unseen, and a reply cut at max_completion_tokens comes back with empty content,
    finish_reason "length" and `usage.completion_tokens_details.reasoning_tokens`."""
    if "completion_tokens_details" not in usage:
        return 0
    details = meta.mapping(usage["completion_tokens_details"],
                           "usage.completion_tokens_details")
    return meta.count(details.get("reasoning_tokens"),
                      "usage.completion_tokens_details.reasoning_tokens") or 0


def reported_cost(usage: dict[str, Any], meta: MetadataReader) -> float | None:
    """The request's cost as the server reports it (OpenRouter: `usage.cost`, in US dollars
    of credit). With the user's own provider key (BYOK, `usage.is_byok`), `cost` is only
    OpenRouter's fee and the provider bills `cost_details.upstream_inference_cost` besides."""
    cost = meta.money(usage.get("cost", replies.MISSING), "usage.cost")
    if cost is None or usage.get("is_byok") is not True:
        return cost
    details = meta.mapping(usage.get("cost_details"), "usage.cost_details")
    upstream = meta.money(details.get("upstream_inference_cost", replies.MISSING),
                          "usage.cost_details.upstream_inference_cost")
    return cost + upstream if upstream is not None else cost


def content_text(content: Any) -> str | None:
    """A string, or the text of content parts (some servers send parts); None if neither."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = []
    for part in content:
        if not isinstance(part, dict):
            return None
        if part.get("type", "text") in ("text", "output_text"):
            text = part.get("text")
            if not isinstance(text, str):
                return None
            texts.append(text)
    return "".join(texts) if texts else None


class OpenAIBackend(HttpBackend):
    name = "openai"

    def __init__(self, model: str, base_url: str = DEFAULT_BASE_URL, *, api_key: str | None,
                 api_key_env: str | None, connections: int = 64,
                 limits: HttpLimits | None = None, flags: TargetFlags = MODEL_FLAGS):
        super().__init__(model, base_url, api_key=api_key, api_key_env=api_key_env,
                         connections=connections, limits=limits, flags=flags)
        self._token_field = token_field_for(base_url)
        self._ask_cost = asks_for_cost(base_url)

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    async def preflight(self) -> None:
        status, body = await self.get_json("/models")
        self.check_auth_status(status)
        if status == 404:
            await self._check_missing_v1()
            log.warning("%s does not list models (GET /models: 404); not checking the model "
                        "name (if every request then fails with HTTP 404, the run stops after "
                        "a few: check the URL)", self.base_url)
            return
        if status >= 400 or not isinstance(body, dict):
            raise PreflightError(f"{self.base_url}/models answered HTTP {status}; is this an "
                                 "OpenAI-compatible server (base URL usually ends in /v1)?")
        served = [m.get("id") for m in body.get("data") or [] if isinstance(m, dict)]
        if self.model not in served:
            listed = ", ".join(map(str, served[:10])) + (" ..." if len(served) > 10 else "")
            raise PreflightError(f"model '{self.model}' is not served by {self.base_url} "
                                 f"(it lists: {listed or 'nothing'})")
        self.served = from_model_list(body, self.model, self.base_url or "")

    async def _check_missing_v1(self) -> None:
        """A base URL without its /v1 (the usual slip: http://host:8000) lists no models;
        if <base>/v1 does, say so before any sample is sent."""
        if urlsplit(self.base_url or "").path.rstrip("/").endswith("/v1"):
            return
        try:
            status, body = await self.get_json("/v1/models")
        except PreflightError:
            return
        if status < 400 and isinstance(body, dict) and isinstance(body.get("data"), list):
            raise PreflightError(f"{self.base_url} lists no models (GET /models: 404) but "
                                 f"{self.base_url}/v1 does: use {self.flags.url} "
                                 f"{self.base_url}/v1")

    def chat_payload(self, request: Request) -> dict[str, Any]:
        payload = chat_payload(self.model, request, self._token_field)
        if self._ask_cost:
            payload["usage"] = {"include": True}
        return payload

    async def complete(self, request: Request) -> Response:
        try:
            data = await self.post_json("/chat/completions", self.chat_payload(request))
        except PermanentError as exc:
            if self._token_field != "max_tokens" or not asks_for_max_completion_tokens(exc):
                raise
            # Said once per run; the same request is sent again with the other name.
            self._token_field = "max_completion_tokens"
            log.info("%s rejects max_tokens; sending max_completion_tokens from now on",
                     self.base_url)
            data = await self.post_json("/chat/completions", self.chat_payload(request))
        return parse_chat_response(data, self.metadata)
