"""Ollama's native /api/chat (images travel as base64 strings beside each message's text)."""

from __future__ import annotations

from typing import Any

from visioneval.backends import body, reasoning, replies
from visioneval.backends.base import PreflightError
from visioneval.backends.http import HttpBackend
from visioneval.backends.replies import MetadataReader
from visioneval.backends.served import from_ollama_tags
from visioneval.core.records import Message, Request, Response

DEFAULT_BASE_URL = "http://localhost:11434"


def ollama_messages(message: Message) -> list[dict[str, Any]]:
    """Ollama attaches images to a message, not between texts, so an interleaved prompt
    becomes consecutive messages, each holding the images that precede its text."""
    out: list[dict[str, Any]] = []
    pending: list[body.Blob] = []  # base64 strings once body.dumps writes them
    for part in message.parts:
        if isinstance(part, str):
            entry: dict[str, Any] = {"role": message.role, "content": part}
            if pending:
                entry["images"] = pending
                pending = []
            out.append(entry)
        else:
            pending.append(body.Blob(part))
    if pending:
        out.append({"role": message.role, "content": "", "images": pending})
    return out


def chat_payload(model: str, request: Request) -> dict[str, Any]:
    settings = request.settings
    options: dict[str, Any] = {"temperature": settings.temperature,
                               "num_predict": settings.max_tokens}
    if settings.seed is not None:
        options["seed"] = settings.seed
    messages = [m for msg in request.messages for m in ollama_messages(msg)]
    return {"model": model, "messages": messages, "stream": False, "options": options}


def served_names(tags: Any) -> list[str]:
    models = tags.get("models") if isinstance(tags, dict) else None
    names = (m.get("name") or m.get("model") for m in models or [] if isinstance(m, dict))
    return [n for n in names if isinstance(n, str)]  # an entry without a name names nothing


class OllamaBackend(HttpBackend):
    name = "ollama"
    default_base_url = DEFAULT_BASE_URL

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    async def preflight(self) -> None:
        status, body = await self.get_json("/api/tags")
        self.check_auth_status(status)
        if status >= 400:
            raise PreflightError(f"{self.base_url}/api/tags answered HTTP {status}; is this an "
                                 "Ollama server?")
        names = served_names(body)
        wanted = {self.model, f"{self.model}:latest"}
        if not wanted & set(names):
            raise PreflightError(f"model '{self.model}' is not pulled on {self.base_url} "
                                 f"(it has: {', '.join(names) or 'nothing'}); "
                                 f"run `ollama pull {self.model}`")
        self.served = from_ollama_tags(body, self.model)

    async def complete(self, request: Request) -> Response:
        data = await self.post_json("/api/chat", chat_payload(self.model, request))
        return parse_chat_response(data, self.metadata)


def parse_chat_response(data: Any, meta: MetadataReader) -> Response:
    """The one place an /api/chat reply is read: message.content must be text. Reasoning,
    in `message.thinking` (a thinking model, Ollama 0.9 on) or inline, is set aside."""
    data = replies.body_object(data)
    finish = meta.text(data.get("done_reason"), "done_reason")
    message = replies.object_at(data, "message", "message")
    content = message.get("content", replies.MISSING)
    thinking = meta.text(message.get("thinking"), "message.thinking")
    answer = reasoning.settle(content if isinstance(content, str) else None, thinking, finish)
    if answer is None:
        raise replies.no_answer("message.content", content, finish, "done_reason")
    return Response(text=answer.answer, reasoning=answer.reasoning, finish_reason=finish,
                    prompt_tokens=meta.count(data.get("prompt_eval_count"), "prompt_eval_count"),
                    completion_tokens=meta.count(data.get("eval_count"), "eval_count"))
