"""Options several benchmarks share: a judge model's flags, and the check that no base URL
holds credentials."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field

from visioneval.core.benchmark import JUDGE_OPTIONS

JudgeBackend = Literal["openai", "openrouter", "ollama", "anthropic"]


def judge_backend_field(description: str = "openai, openrouter, ollama or anthropic.") -> Any:
    """`--judge-backend KIND` in the judge's panel of --help."""
    return Field(None, description=description,
                 json_schema_extra={"panel": JUDGE_OPTIONS, "metavar": "KIND"})


def judge_model_field(description: str, shown_default: str | None = None) -> Any:
    """A judge model's name (`--judge-model NAME`, or a benchmark's second judge)."""
    extra: dict[str, Any] = {"panel": JUDGE_OPTIONS, "metavar": "NAME"}
    if shown_default is not None:
        extra["shown_default"] = shown_default
    return Field(None, description=description, json_schema_extra=extra)


def judge_base_url_field(whose: str = "judge's") -> Any:
    """`--judge-base-url URL[,URL...]`."""
    return Field(None, description=f"The {whose} URL(s), comma-separated.",
                 json_schema_extra={"panel": JUDGE_OPTIONS, "metavar": "URL",
                                    "shown_default": "the backend's"})


def judge_api_key_env_field(whose: str = "judge's") -> Any:
    """`--judge-api-key-env NAME`: the variable holding the key, never the key."""
    return Field(None, description=f"Variable holding the {whose} key.",
                 json_schema_extra={"panel": JUDGE_OPTIONS, "metavar": "NAME",
                                    "shown_default": "as for --api-key-env"})


def refuse_credentials(urls: str | None, what: str = "judge") -> None:
    """A `--<what>-base-url` (one URL, or several separated by commas) that holds a user name
    or password is refused: options are recorded in run.json, and a password there would be
    written down; the key comes from `--<what>-api-key-env` instead."""
    for url in (urls or "").split(","):
        parts = urlsplit(url.strip())
        if parts.username or parts.password:
            raise ValueError(f"--{what}-base-url holds credentials; give the key with "
                             f"--{what}-api-key-env instead")
