"""The options of a layout run (CANVAS): what run.json records to rebuild it, and the flags
of `visioneval layout`, generated from it (with the definition's `command_line`,
commandline.py)."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from visioneval.core.benchmark import OUTPUT_OPTIONS, OWN_OPTIONS
from visioneval.core.option_checks import refuse_credentials

CaptionBackend = Literal["openai", "ollama", "anthropic", "blip"]
SERVED = ("openai", "ollama", "anthropic")  # captioners asked through the engine (its judge)
CAPTION_TOKENS = 60  # one sentence (CANVAS's BLIP captions are under 50 tokens)


SEMANTIC = "Semantic match"  # the --help panel of the captioner's options


def _in(panel: str, **more: str) -> dict[str, Any]:
    return {"panel": panel, **more}


class LayoutOptions(BaseModel, frozen=True):
    """One run: a CANVAS folder, the generated model's folder in it, its variants. Each field
    is a flag of `visioneval layout`, spelled as CANVAS's reference code spells it."""

    base_dir: str = Field(  # absolute: a resume from another folder finds it
        description="The CANVAS folder (generation_gt, generation_gen).",
        json_schema_extra=_in(OWN_OPTIONS, metavar="DIR"))
    model: str = Field(  # the folder under results/generation_gen, not a server
        "gpt-4o", description="Model folder under results/generation_gen.",
        json_schema_extra=_in(OWN_OPTIONS, metavar="NAME"))
    variants: list[str] = Field(
        default_factory=lambda: ["image_only"], min_length=1,
        description="CANVAS's variant folder(s), comma-separated (not request variants: "
        "layout sends no image to a model).",
        json_schema_extra=_in(OWN_OPTIONS, flag="--variant", shown_default="image_only"))
    ids: list[str] | None = Field(None, description="Only these GT ids.",
                                  json_schema_extra=_in(OWN_OPTIONS, shown_default="every id"))
    workers: int | None = Field(None, ge=1, description="Processes.",  # None: one per core
                                json_schema_extra=_in(OWN_OPTIONS,
                                                      shown_default="one per core"))
    viz: bool = Field(False, description="Draw each sample's boxes and an index.html.",
                      json_schema_extra=_in(OUTPUT_OPTIONS))
    skip_semantic: bool = Field(False, description="No captioning: reuse an earlier "
                                "result's captions.", json_schema_extra=_in(SEMANTIC))
    semantic_from: str | None = Field(  # an earlier result whose semantic values are reused
        None, description="That result: a run folder or results file (CANVAS's too).",
        json_schema_extra=_in(SEMANTIC, metavar="PATH",
                              shown_default="--out FILE.json if it exists"))
    caption_backend: CaptionBackend | None = Field(
        None, description="openai, ollama, anthropic (a served VLM) or blip.",
        json_schema_extra=_in(SEMANTIC, metavar="KIND"))
    caption_model: str | None = Field(
        None, description="The captioning model.",
        json_schema_extra=_in(SEMANTIC, metavar="NAME",
                              shown_default="blip: blip-image-captioning-base"))
    caption_base_url: str | None = Field(
        None, description="The captioner's server URL.",
        json_schema_extra=_in(SEMANTIC, metavar="URL", shown_default="the backend's"))
    caption_api_key_env: str | None = Field(
        None, description="Variable holding the captioner's key.",
        json_schema_extra=_in(SEMANTIC, metavar="NAME", shown_default="a hosted API's own"))
    caption_prompt: str | None = Field(  # None: semantic.CAPTION_PROMPT
        None, description="The captioning prompt.",
        json_schema_extra=_in(SEMANTIC, metavar="TEXT",
                              shown_default="one sentence per screen"))
    embedder: Literal["minilm", "bow"] = Field(
        "minilm", description="minilm (the semantic extra) or bag of words.",
        json_schema_extra=_in(SEMANTIC))

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
        refuse_credentials(self.caption_base_url, "caption")
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
            from visioneval.canvas.semantic import BLIP_DEFAULT

            return f"blip:{self.caption_model or BLIP_DEFAULT}"
        return f"{self.caption_backend}:{self.caption_model}"
