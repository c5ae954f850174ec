"""What a server says it serves under a model name: the part of a model's identity that tells
two checkpoints behind one name apart.

The response cache keys answers on the model's identity, and a resumed run must not mix two
models, so the identity must change when the weights do and stay put when only the server's
address does (replicas of one model share answers). Each server says it differently:
- vLLM and SGLang list the checkpoint they loaded as `root` in `/v1/models` (and a LoRA
  adapter's base model as `parent`); `id` is only the served name.
- OpenRouter lists a `canonical_slug` that names the dated model behind an alias.
- Ollama's `/api/tags` gives each pulled model's `digest` (a new pull, a new digest).
- The hosted APIs (api.openai.com, api.anthropic.com, openrouter.ai) serve one model per id;
  their listing's creation time is kept beside the host. Their undated aliases (gpt-4o) may
  move to newer snapshots; a dated id (gpt-4o-2024-08-06) pins one.
A server that says none of this (LM Studio, a proxy, a server without a model list) gives
None: the caller then keys on the server's URL instead.
"""

from __future__ import annotations

from typing import Any

from visioneval.backends.keys import HOSTED_KEY_VARS, host_of

Served = dict[str, str | int | float]
"""Only JSON scalars: the identity is hashed into cache keys and written to run.json."""

_WEIGHT_FIELDS = ("root", "parent", "canonical_slug")
_HOSTED_TIME_FIELDS = ("created", "created_at")


def hosted_host(base_url: str) -> str | None:
    """The hosted API a URL belongs to (api.openai.com ...), or None for any other server."""
    host = host_of(base_url)
    for hosted in HOSTED_KEY_VARS:
        if host == hosted or host.endswith("." + hosted):
            return hosted
    return None


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool) and \
        value != ""


def from_model_list(body: Any, model: str, base_url: str) -> Served | None:
    """From an OpenAI-style model list (`/v1/models`: {"data": [{"id": ...}, ...]}, also
    Anthropic's): the fields of the entry whose id is `model` that name its weights."""
    entries = body.get("data") if isinstance(body, dict) else None
    entry = next((e for e in entries or [] if isinstance(e, dict) and e.get("id") == model),
                 None)
    if entry is None:
        return None
    served: Served = {k: entry[k] for k in _WEIGHT_FIELDS if _scalar(entry.get(k))}
    host = hosted_host(base_url)
    if host is not None:
        served["host"] = host
        served |= {k: entry[k] for k in _HOSTED_TIME_FIELDS if _scalar(entry.get(k))}
    return served or None


def from_ollama_tags(body: Any, model: str) -> Served | None:
    """From Ollama's `/api/tags`: the digest of the pulled model named `model` (or
    `model:latest`, which is what Ollama means by an untagged name)."""
    models = body.get("models") if isinstance(body, dict) else None
    wanted = (model, f"{model}:latest")
    for entry in models or []:
        if not isinstance(entry, dict):
            continue
        if entry.get("name") in wanted or entry.get("model") in wanted:
            digest = entry.get("digest")
            return {"digest": digest} if isinstance(digest, str) and digest else None
    return None


# What each field is called where a user reads it (the server's own field name says little).
_SAID_AS = {"root": "checkpoint", "parent": "base model", "canonical_slug": "dated model",
            "digest": "digest", "host": "on", "created": "listed at", "created_at": "listed at"}


def served_text(served: dict[str, Any]) -> str:
    """What a server serves, in the words a user reads (`checkpoint /ckpt/step-1000`)."""
    return ", ".join(f"{_SAID_AS.get(k, k)} {v}" for k, v in served.items())


def describe(identity: dict[str, Any]) -> str:
    """An identity in a few words, for terminal lines and `visioneval cache`."""
    served = identity.get("served")
    model = f"{identity.get('backend', '?')} {identity.get('model', '?')}"
    if isinstance(served, dict) and served:
        return f"{model} ({served_text(served)})"
    url = identity.get("base_url")
    if isinstance(url, list):
        url = ", ".join(map(str, url))
    return f"{model} at {url}" if url else model
