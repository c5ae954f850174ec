"""Backend names -> classes, and the settings that build one (the key stays in the environment)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, model_validator

from visioneval.backends.base import Backend
from visioneval.backends.keys import MODEL_FLAGS, TargetFlags, key_source, redact_url

if TYPE_CHECKING:  # aiohttp loads only when an HTTP backend is built
    from visioneval.backends.http import HttpBackend, HttpLimits

BackendKind = Literal["openai", "openrouter", "ollama", "anthropic", "builtin", "none"]
OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"

CHOICES: dict[BackendKind, str] = {
    "openai": "any OpenAI-compatible chat-completions server: OpenAI, vLLM, SGLang, LM Studio, "
              "Ollama's /v1",
    "openrouter": "OpenRouter (OpenAI-compatible; the cost each request reports is recorded)",
    "ollama": "an Ollama server's own /api/chat",
    "anthropic": "Anthropic's Messages API",
    "builtin": "offline baselines inside visioneval: no server, no key",
}
"""What each `--backend` a user may name speaks to (`visioneval list`); "none" is no choice:
a benchmark that asks no model (layout scores files)."""


_NEXT_URL = re.compile(r",\s*(?=[A-Za-z][A-Za-z0-9+.-]*://)")


def split_urls(given: str | Sequence[str] | None) -> tuple[str, ...]:
    """URLs given once each, several times, or as a comma list ("http://a,http://b"): a
    comma splits only where a new URL starts, so a comma inside a query stays."""
    if given is None:
        return ()
    items = [given] if isinstance(given, str) else list(given)
    return tuple(url.strip() for item in items for url in _NEXT_URL.split(item) if url.strip())


class BackendSpec(BaseModel, frozen=True):
    """What run.json records about the backend: never the key, only where it came from.
    `base_urls` are replicas of one model; `base_url` is the first (or only) one."""

    kind: BackendKind
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    base_urls: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _one_or_several(cls, data: Any) -> Any:
        """`base_url` may be one URL, a comma list or a list; `base_urls` follows it."""
        if not isinstance(data, dict):
            return data
        urls = split_urls(data.get("base_urls") or data.get("base_url"))
        return data | {"base_url": urls[0] if urls else None, "base_urls": urls}

    def resolved_base_urls(self) -> tuple[str, ...]:
        if self.base_urls or self.kind in ("builtin", "none"):
            return self.base_urls
        from visioneval.backends import anthropic, ollama, openai

        return ({"openai": openai.DEFAULT_BASE_URL, "openrouter": OPENROUTER_BASE_URL,
                 "ollama": ollama.DEFAULT_BASE_URL,
                 "anthropic": anthropic.DEFAULT_BASE_URL}[self.kind],)

    def resolved_base_url(self) -> str | None:
        urls = self.resolved_base_urls()
        return urls[0] if urls else None

    def key_env(self) -> str | None:
        """The variable the key is read from (None for builtin)."""
        if self.kind in ("builtin", "none"):
            return None
        return key_source(self.resolved_base_url() or "", self.api_key_env).env_name

    def recorded(self) -> dict[str, Any]:
        """What run.json keeps: the URLs without credentials, and whether any had some (a
        resume then needs --base-url again); where the key came from, never the key."""
        urls = self.resolved_base_urls()
        safe = tuple(redact_url(url) for url in urls)
        return self.model_dump() | {"base_url": safe[0] if safe else None,
                                    "base_urls": list(safe), "key_env_used": self.key_env(),
                                    "base_url_credentials": safe != urls}


@dataclass(frozen=True)
class Dispatch:
    """How requests are spread and limited: `concurrency` per endpoint, requests and tokens
    per minute for the model, and whether the cache key names the URL (`cache_key_url`)."""

    concurrency: int
    rpm: int | None = None
    tpm: int | None = None
    cache_key_url: bool = False


def make_backend(spec: BackendSpec, *, connections: int = 64,
                 majority: Mapping[tuple[str, ...], str] | None = None,
                 seed: int = 0, dispatch: Dispatch | None = None,
                 limits: HttpLimits | None = None, flags: TargetFlags = MODEL_FLAGS) -> Backend:
    """Build the backend; a missing required key raises PreflightError naming the variable.
    A server backend with `dispatch` (or several URLs) is a `Replicas` dispatcher over one
    backend per URL; each URL gets the key that belongs to its host, or none. `limits` caps
    what a server backend reads of a reply and how long its preflight waits; `flags` are the
    options naming its server and key on the command in use (said in its error lines)."""
    if spec.kind == "none":
        from visioneval.backends.base import NullBackend

        return NullBackend()
    if spec.kind == "builtin":
        from visioneval.backends.builtin import BuiltinBackend

        return BuiltinBackend(spec.model, majority=majority, seed=seed)
    urls = spec.resolved_base_urls()
    if dispatch is None and len(urls) == 1:
        return _server_backend(spec, urls[0], connections, limits, flags)
    from visioneval.backends.ratelimit import RateLimiter
    from visioneval.backends.replicas import Replicas

    dispatch = dispatch or Dispatch(concurrency=connections)
    # One spare connection each: the probe of an endpoint taken out never queues.
    endpoints = [_server_backend(spec, url, dispatch.concurrency + 1, limits, flags)
                 for url in urls]
    limiter = RateLimiter(dispatch.rpm, dispatch.tpm) if dispatch.rpm or dispatch.tpm else None
    return Replicas(endpoints, concurrency=dispatch.concurrency, limiter=limiter,
                    cache_key_url=dispatch.cache_key_url)


def _server_backend(spec: BackendSpec, base_url: str, connections: int,
                    limits: HttpLimits | None = None,
                    flags: TargetFlags = MODEL_FLAGS) -> HttpBackend:
    source = key_source(base_url, spec.api_key_env)
    key = source.read(flags)
    cls: type[HttpBackend]
    if spec.kind in ("openai", "openrouter"):
        from visioneval.backends.openai import OpenAIBackend as cls
    elif spec.kind == "ollama":
        from visioneval.backends.ollama import OllamaBackend as cls
    else:
        from visioneval.backends.anthropic import AnthropicBackend as cls
    return cls(spec.model, base_url, api_key=key, api_key_env=source.env_name,
               connections=connections, limits=limits, flags=flags)
