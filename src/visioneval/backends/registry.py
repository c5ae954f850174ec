"""Backend names -> classes, and the settings that build one (the key stays in the environment)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from visioneval.backends.base import Backend
from visioneval.backends.keys import key_source, redact_url

if TYPE_CHECKING:  # aiohttp loads only when an HTTP backend is built
    from visioneval.backends.http import HttpBackend

BackendKind = Literal["openai", "openrouter", "ollama", "anthropic", "builtin", "none"]
OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"


class BackendSpec(BaseModel, frozen=True):
    """What run.json records about the backend: never the key, only where it came from."""

    kind: BackendKind
    model: str
    base_url: str | None = None
    api_key_env: str | None = None

    def resolved_base_url(self) -> str | None:
        if self.base_url or self.kind in ("builtin", "none"):
            return self.base_url
        from visioneval.backends import anthropic, ollama, openai

        return {"openai": openai.DEFAULT_BASE_URL, "openrouter": OPENROUTER_BASE_URL,
                "ollama": ollama.DEFAULT_BASE_URL,
                "anthropic": anthropic.DEFAULT_BASE_URL}[self.kind]

    def key_env(self) -> str | None:
        """The variable the key is read from (None for builtin)."""
        if self.kind in ("builtin", "none"):
            return None
        return key_source(self.resolved_base_url() or "", self.api_key_env).env_name

    def recorded(self) -> dict[str, Any]:
        """What run.json keeps: the URL without credentials, and whether it had any (a
        resume then needs --base-url again); where the key came from, never the key."""
        url = self.resolved_base_url()
        safe = redact_url(url) if url else url
        return self.model_dump() | {"base_url": safe, "key_env_used": self.key_env(),
                                    "base_url_credentials": safe != url}


def make_backend(spec: BackendSpec, *, connections: int = 64,
                 majority: Mapping[tuple[str, ...], str] | None = None,
                 seed: int = 0) -> Backend:
    """Build the backend; a missing required key raises PreflightError naming the variable."""
    if spec.kind == "none":
        from visioneval.backends.base import NullBackend

        return NullBackend()
    if spec.kind == "builtin":
        from visioneval.backends.builtin import BuiltinBackend

        return BuiltinBackend(spec.model, majority=majority, seed=seed)
    base_url = spec.resolved_base_url() or ""
    source = key_source(base_url, spec.api_key_env)
    key = source.read()
    cls: type[HttpBackend]
    if spec.kind in ("openai", "openrouter"):
        from visioneval.backends.openai import OpenAIBackend as cls
    elif spec.kind == "ollama":
        from visioneval.backends.ollama import OllamaBackend as cls
    else:
        from visioneval.backends.anthropic import AnthropicBackend as cls
    return cls(spec.model, base_url, api_key=key, api_key_env=source.env_name,
               connections=connections)
