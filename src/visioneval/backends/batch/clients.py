"""Which backends have a batch API, and the client for one."""

from __future__ import annotations

from visioneval.backends.anthropic import AnthropicBackend
from visioneval.backends.base import Backend
from visioneval.backends.batch.anthropic import AnthropicBatch
from visioneval.backends.batch.base import BatchClient
from visioneval.backends.batch.openai import OpenAIBatch
from visioneval.backends.openai import OpenAIBackend
from visioneval.backends.registry import BackendSpec
from visioneval.backends.replicas import Replicas

PROVIDERS = {"openai": "OpenAI's Batch API", "anthropic": "Anthropic's Message Batches"}


def refusal(spec: BackendSpec) -> str | None:
    """Why `spec`'s model cannot be asked in batches (None: it can)."""
    if spec.kind not in PROVIDERS:
        return (f"--batch: the {spec.kind} backend has no batch API (openai and anthropic "
                "have one)")
    if len(spec.base_urls) > 1:
        return "--batch sends one batch to one server: give one --base-url"
    return None


def batch_client(backend: Backend) -> BatchClient:
    """The batch client on `backend`'s server, key and limits (one endpoint)."""
    if isinstance(backend, Replicas):
        backend = backend.endpoints[0].backend
    if isinstance(backend, OpenAIBackend):
        return OpenAIBatch(backend)
    if isinstance(backend, AnthropicBackend):
        return AnthropicBatch(backend)
    raise ValueError(f"--batch: the {backend.name} backend has no batch API")
