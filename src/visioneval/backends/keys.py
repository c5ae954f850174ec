"""API keys come from the environment only; this module decides which variable to read."""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlparse

from visioneval.backends.base import PreflightError

HOSTED_KEY_VARS = {
    "api.openai.com": "OPENAI_API_KEY",
    "openrouter.ai": "OPENROUTER_API_KEY",
    "api.anthropic.com": "ANTHROPIC_API_KEY",
}


@dataclass(frozen=True)
class KeySource:
    """Where a backend's key comes from; the value itself is never stored."""

    env_name: str | None
    required: bool

    def read(self) -> str | None:
        """The key, or a PreflightError naming the variable when a required key is missing."""
        value = os.environ.get(self.env_name) if self.env_name else None
        if self.required and not value:
            raise PreflightError(
                f"missing API key: set ${self.env_name} (or name another variable with "
                "--api-key-env)")
        return value or None


def host_of(base_url: str) -> str:
    return (urlparse(base_url).hostname or "").lower()


def key_source(base_url: str, default_env: str | None, explicit_env: str | None) -> KeySource:
    """An explicit --api-key-env is required; hosted APIs need their key; local servers may not."""
    if explicit_env:
        return KeySource(explicit_env, required=True)
    host = host_of(base_url)
    for hosted, env in HOSTED_KEY_VARS.items():
        if host == hosted or host.endswith("." + hosted):
            return KeySource(env, required=True)
    return KeySource(default_env, required=False)
