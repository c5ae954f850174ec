"""Anthropic's Messages API, spoken over the same lean HTTP client as the other servers."""

from __future__ import annotations

from typing import Any

from visioneval.backends import body, reasoning, replies
from visioneval.backends.base import PreflightError
from visioneval.backends.http import HttpBackend
from visioneval.backends.replies import MetadataReader
from visioneval.backends.served import from_model_list
from visioneval.core.records import Message, Request, Response

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


def anthropic_content(message: Message) -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": p} if isinstance(p, str)
        else {"type": "image",
              "source": {"type": "base64", "media_type": p.mime, "data": body.Blob(p)}}
        for p in message.parts
    ]


def messages_payload(model: str, request: Request) -> dict[str, Any]:
    settings = request.settings
    system = "\n".join(m.text() for m in request.messages if m.role == "system")
    payload: dict[str, Any] = {
        "model": model,
        "max_tokens": settings.max_tokens,
        "temperature": settings.temperature,
        "messages": [{"role": m.role, "content": anthropic_content(m)}
                     for m in request.messages if m.role != "system"],
    }
    if system:
        payload["system"] = system
    return payload


class AnthropicBackend(HttpBackend):
    name = "anthropic"
    default_base_url = DEFAULT_BASE_URL

    def auth_headers(self) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    async def preflight(self) -> None:
        status, body = await self.get_json("/v1/models?limit=1000")
        self.check_auth_status(status)
        if status >= 400 or not isinstance(body, dict):
            raise PreflightError(f"{self.base_url}/v1/models answered HTTP {status}; is this "
                                 "the Anthropic API?")
        served = [m.get("id") for m in body.get("data") or [] if isinstance(m, dict)]
        if self.model not in served:
            raise PreflightError(f"model '{self.model}' is not served by {self.base_url} "
                                 f"(it lists: {', '.join(map(str, served[:10])) or 'nothing'})")
        self.served = from_model_list(body, self.model, self.base_url or "")

    async def complete(self, request: Request) -> Response:
        data = await self.post_json("/v1/messages", messages_payload(self.model, request))
        return parse_messages_response(data, self.metadata)


def parse_messages_response(data: Any, meta: MetadataReader) -> Response:
    """The one place a Messages API reply is read: the text blocks of `content`, in order,
    are the answer; thinking blocks (extended thinking) are set aside as its reasoning."""
    data = replies.body_object(data)
    finish = meta.text(data.get("stop_reason"), "stop_reason")
    content = data.get("content", replies.MISSING)
    if not isinstance(content, list):
        raise replies.malformed("content", content)
    texts = []
    thoughts: list[str | None] = []
    for i, block in enumerate(content):
        if not isinstance(block, dict):
            raise replies.malformed(f"content[{i}]", block)
        kind = block.get("type")
        if kind == "text":
            text = block.get("text", replies.MISSING)
            if not isinstance(text, str):
                raise replies.no_answer(f"content[{i}].text", text, finish, "stop_reason")
            texts.append(text)
        elif kind == "thinking":
            thoughts.append(meta.text(block.get("thinking"), f"content[{i}].thinking"))
        elif kind == "redacted_thinking":
            thoughts.append(reasoning.REDACTED)
    answer = reasoning.settle("".join(texts) if texts else None, reasoning.join(*thoughts),
                              finish)
    if answer is None:
        raise replies.no_answer("content", "no text block", finish, "stop_reason")
    usage = meta.mapping(data.get("usage"), "usage")
    return Response(text=answer.answer, reasoning=answer.reasoning, finish_reason=finish,
                    prompt_tokens=meta.count(usage.get("input_tokens"), "usage.input_tokens"),
                    completion_tokens=meta.count(usage.get("output_tokens"),
                                                 "usage.output_tokens"))
