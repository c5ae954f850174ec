"""API keys come from the environment only; this module decides which variable to read and
keeps credentials out of every URL that is recorded or shown."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from visioneval.backends.base import PreflightError

HOSTED_KEY_VARS = {
    "api.openai.com": "OPENAI_API_KEY",
    "openrouter.ai": "OPENROUTER_API_KEY",
    "api.anthropic.com": "ANTHROPIC_API_KEY",
}
MASK = "***"
# Query parameters that carry a secret (key=, api_key=, token=, sig= ...).
_SECRET_PARAM = re.compile(r"key|token|secret|pass|auth|sig|credential", re.IGNORECASE)


@dataclass(frozen=True)
class TargetFlags:
    """The flags that name a model's server and key variable on the command in use (the
    model's own, a judge's, a captioner's): every line that tells the user what to give
    names these, so it works on that command."""

    url: str = "--base-url"
    key: str = "--api-key-env"


MODEL_FLAGS = TargetFlags()


@dataclass(frozen=True)
class KeySource:
    """Where a backend's key comes from; the value itself is never stored."""

    env_name: str | None
    required: bool

    def read(self, flags: TargetFlags = MODEL_FLAGS) -> str | None:
        """The key, or a PreflightError naming the variable when a required key is missing
        (and `flags.key`, the option that names another)."""
        value = os.environ.get(self.env_name) if self.env_name else None
        if self.required and not value:
            raise PreflightError(
                f"missing API key: set ${self.env_name} (or name another variable with "
                f"{flags.key})")
        return value or None


def host_of(base_url: str) -> str:
    return (urlsplit(base_url).hostname or "").lower()


def key_source(base_url: str, explicit_env: str | None) -> KeySource:
    """A key goes only to the host it belongs to: a hosted API gets its own variable's key
    (required); any other URL gets no key unless --api-key-env names one for it (then
    required). So a local test server never receives OPENAI_API_KEY by accident."""
    if explicit_env:
        return KeySource(explicit_env, required=True)
    host = host_of(base_url)
    for hosted, env in HOSTED_KEY_VARS.items():
        if host == hosted or host.endswith("." + hosted):
            return KeySource(env, required=True)
    return KeySource(None, required=False)


def url_secrets(url: str) -> list[str]:
    """The secret strings in a URL (user, password, key-like query values), for scrubbing."""
    parts = urlsplit(url)
    found = [s for s in (parts.username, parts.password) if s]
    for pair in parts.query.split("&"):
        name, _, value = pair.partition("=")
        if value and _SECRET_PARAM.search(name):
            found.append(value)
    return found


def redact_url(url: str) -> str:
    """The URL as it may be recorded: userinfo and key-like query values replaced by ***.
    A URL without credentials comes back unchanged (cache keys stay the same)."""
    parts = urlsplit(url)
    netloc, query = parts.netloc, parts.query
    if "@" in netloc:
        netloc = MASK + "@" + netloc.rpartition("@")[2]
    if query:
        pairs = []
        for pair in query.split("&"):
            name, eq, value = pair.partition("=")
            pairs.append(f"{name}={MASK}" if value and _SECRET_PARAM.search(name) else pair)
        query = "&".join(pairs)
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
