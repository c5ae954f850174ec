"""The model a run asks, as a run records it (`BackendSpec`): its API, its name, the servers
and the variable its key is read from, never the key. What each API's default server and key
variable are is the backends' knowledge (`visioneval.backends.registry`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, model_validator

BackendKind = Literal["openai", "openrouter", "ollama", "anthropic", "builtin", "human",
                      "none"]

LOCAL_KINDS: tuple[BackendKind, ...] = ("builtin", "human", "none")
"""Backends on this machine: no key, no server to trust (a person's page is served on
127.0.0.1 by the run itself)."""

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
