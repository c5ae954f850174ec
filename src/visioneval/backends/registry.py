"""Backend names -> classes, and the settings that build one (the key stays in the environment)."""

# Imports inside functions: each backend loads on first use, so `visioneval --help` (which reads
# the registry) loads none.

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from visioneval.backends.base import Backend, NullBackend
from visioneval.backends.keys import MODEL_FLAGS, TargetFlags, key_source, redact_url
from visioneval.core.backend_spec import LOCAL_KINDS, BackendKind, BackendSpec

if TYPE_CHECKING:  # aiohttp loads only when an HTTP backend is built
    from visioneval.backends.http import HttpBackend, HttpLimits

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"

CHOICES: dict[BackendKind, str] = {
    "openai": "any OpenAI-compatible chat-completions server: OpenAI, vLLM, SGLang, LM Studio, "
              "Ollama's /v1",
    "openrouter": "OpenRouter (OpenAI-compatible; the cost each request reports is recorded)",
    "ollama": "an Ollama server's own /api/chat",
    "anthropic": "Anthropic's Messages API",
    "builtin": "offline baselines inside visioneval: no server, no key",
    "human": "a person answers in a browser, one trial at a time (--model: the observer's "
             "id; the page is served on 127.0.0.1)",
}
"""What each `--backend` a user may name speaks to (`visioneval list`); "none" is no choice:
a benchmark that asks no model (layout scores files)."""


def resolved_base_urls(spec: BackendSpec) -> tuple[str, ...]:
    """The servers asked: those given, else the API's own."""
    if spec.base_urls or spec.kind in LOCAL_KINDS:
        return spec.base_urls
    from visioneval.backends import anthropic, ollama, openai

    return ({"openai": openai.DEFAULT_BASE_URL, "openrouter": OPENROUTER_BASE_URL,
             "ollama": ollama.DEFAULT_BASE_URL,
             "anthropic": anthropic.DEFAULT_BASE_URL}[spec.kind],)


def resolved_base_url(spec: BackendSpec) -> str | None:
    urls = resolved_base_urls(spec)
    return urls[0] if urls else None


def key_env(spec: BackendSpec) -> str | None:
    """The variable the key is read from (None for builtin)."""
    if spec.kind in LOCAL_KINDS:
        return None
    return key_source(resolved_base_url(spec) or "", spec.api_key_env).env_name


def recorded(spec: BackendSpec) -> dict[str, Any]:
    """What run.json keeps: the URLs without credentials, and whether any had some (a
    resume then needs --base-url again); where the key came from, never the key."""
    urls = resolved_base_urls(spec)
    safe = tuple(redact_url(url) for url in urls)
    return spec.model_dump() | {"base_url": safe[0] if safe else None,
                                "base_urls": list(safe), "key_env_used": key_env(spec),
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
                 reader: Callable[[str, bytes], str] | None = None, seed: int = 0,
                 dispatch: Dispatch | None = None,
                 limits: HttpLimits | None = None, flags: TargetFlags = MODEL_FLAGS) -> Backend:
    """Build the backend; a missing required key raises PreflightError naming the variable.
    A server backend with `dispatch` (or several URLs) is a `Replicas` dispatcher over one
    backend per URL; each URL gets the key that belongs to its host, or none. `limits` caps
    what a server backend reads of a reply and how long its preflight waits; `flags` are the
    options naming its server and key on the command in use (said in its error lines)."""
    if spec.kind == "none":
        return NullBackend()
    if spec.kind == "builtin":
        from visioneval.backends.builtin import BuiltinBackend

        return BuiltinBackend(spec.model, majority=majority, reader=reader, seed=seed)
    if spec.kind == "human":
        from visioneval.backends.human import HumanBackend

        return HumanBackend(spec.model, port=_page_port(spec))
    urls = resolved_base_urls(spec)
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


def _page_port(spec: BackendSpec) -> int | None:
    """The port of a person's page: --base-url http://127.0.0.1:PORT, else the first free
    one from the backend's default."""
    if not spec.base_urls:
        return None
    try:
        parts = urlsplit(spec.base_urls[0])
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if host not in ("127.0.0.1", "localhost") or port is None:
        raise ValueError(f"--base-url {spec.base_urls[0]}: a person's page is served on "
                         "this machine only; give http://127.0.0.1:PORT, or no --base-url")
    return port
