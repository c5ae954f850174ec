"""The options of a layout run (CANVAS): what run.json records to rebuild it, and what
`visioneval layout` turns its flags into."""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator, model_validator

CaptionBackend = Literal["openai", "ollama", "anthropic", "blip"]
SERVED = ("openai", "ollama", "anthropic")  # captioners asked through the engine (its judge)
CAPTION_TOKENS = 60  # one sentence (CANVAS's BLIP captions are under 50 tokens)


class LayoutOptions(BaseModel, frozen=True):
    """One run: a CANVAS folder, the generated model's folder in it, its variants."""

    base_dir: str  # absolute: a resume from another folder finds it
    model: str = "gpt-4o"  # the folder under results/generation_gen, not a server
    variants: list[str] = Field(default_factory=lambda: ["image_only"], min_length=1)
    ids: list[str] | None = None
    workers: int | None = Field(None, ge=1)  # None: one process per core
    viz: bool = False
    skip_semantic: bool = False
    semantic_from: str | None = None  # an earlier result whose semantic values are reused
    caption_backend: CaptionBackend | None = None
    caption_model: str | None = None
    caption_base_url: str | None = None
    caption_api_key_env: str | None = None
    caption_prompt: str | None = None  # None: semantic.CAPTION_PROMPT
    embedder: Literal["minilm", "bow"] = "minilm"

    @field_validator("base_dir", "semantic_from")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        """As run.json keeps them: a resume from another folder reads the same files."""
        return None if value is None else str(Path(value).absolute())

    @model_validator(mode="after")
    def _caption_flags_fit(self) -> LayoutOptions:
        if self.caption_backend in SERVED and not self.caption_model:
            raise ValueError("--caption-model is required with --caption-backend "
                             f"{self.caption_backend}")
        parts = urlsplit(self.caption_base_url or "")
        if parts.username or parts.password:
            # Options are recorded in run.json: a password there would be written down.
            raise ValueError("--caption-base-url holds credentials; give the key with "
                             "--caption-api-key-env instead")
        if len(set(self.variants)) != len(self.variants):
            raise ValueError("--variant names a variant twice")
        return self

    @property
    def served_captioner(self) -> bool:
        """Whether captions come from a served VLM (asked through the engine)."""
        return not self.skip_semantic and self.caption_backend in SERVED

    def captioner_name(self) -> str | None:
        if self.skip_semantic or self.caption_backend is None:
            return None
        if self.caption_backend == "blip":
            from visioneval.layout.semantic import BLIP_DEFAULT

            return f"blip:{self.caption_model or BLIP_DEFAULT}"
        return f"{self.caption_backend}:{self.caption_model}"
