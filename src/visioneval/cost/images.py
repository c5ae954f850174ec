"""Image tokens before sending, by each provider's published rule for the image's size (read
from the file's header; pixels are never decoded). Text is estimated as characters / 4.

- OpenAI, tile models (gpt-4o, gpt-4.1, gpt-4.5, o1, o3; gpt-4o-mini at its own rates): the
  image is fitted in 2048 x 2048, its short side brought down to 768 px, and it costs a base
  plus a fee per 512 px tile (85 + 170 for gpt-4o). This is `detail: high`; visioneval sends
  no `detail`, so the server's `auto` may choose low (85 tokens): an upper bound.
- OpenAI, patch models (gpt-4.1-mini, gpt-4.1-nano, o4-mini): one token per 32 px patch,
  at most 1536 patches (a larger image is scaled down to fit), times the model's multiplier.
- Anthropic (claude-*): the long edge brought down to 1568 px; width x height / 750 tokens,
  at most about 1600.
- Any other model: unknown (said so, never guessed).

Sources: OpenAI's "Images and vision" guide, section "Calculating costs"; Anthropic's
"Vision" guide, section "Evaluate image size".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

CHARS_PER_TOKEN = 4
"""Text tokens are estimated as characters / 4, rounded up (OpenAI's rule of thumb for
English; no tokenizer is loaded)."""


def text_tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class ImageRule:
    """One provider's rule: `name` says which, `tokens(width, height)` applies it."""

    name: str
    tokens: Callable[[int, int], int]


def openai_tiles(base: int, tile: int) -> Callable[[int, int], int]:
    def tokens(width: int, height: int) -> int:
        w, h = float(width), float(height)
        scale = min(1.0, 2048 / max(w, h))
        w, h = w * scale, h * scale
        scale = min(1.0, 768 / min(w, h))
        w, h = w * scale, h * scale
        return base + tile * math.ceil(w / 512) * math.ceil(h / 512)

    return tokens


PATCH = 32
PATCH_BUDGET = 1536


def openai_patches(multiplier: float) -> Callable[[int, int], int]:
    def tokens(width: int, height: int) -> int:
        patches = math.ceil(width / PATCH) * math.ceil(height / PATCH)
        if patches > PATCH_BUDGET:
            shrink = math.sqrt(PATCH_BUDGET * PATCH * PATCH / (width * height))
            # Shrunk a little more so a whole number of patches spans the width.
            across = width * shrink / PATCH
            shrink *= math.floor(across) / across
            patches = math.ceil(width * shrink / PATCH) * math.ceil(height * shrink / PATCH)
        return math.ceil(min(patches, PATCH_BUDGET) * multiplier)

    return tokens


ANTHROPIC_LONG_EDGE = 1568
ANTHROPIC_MAX_TOKENS = 1600


def anthropic_tokens(width: int, height: int) -> int:
    scale = min(1.0, ANTHROPIC_LONG_EDGE / max(width, height))
    return min(ANTHROPIC_MAX_TOKENS, math.ceil(width * scale * height * scale / 750))


TILES = "OpenAI's tile rule"
PATCHES = "OpenAI's patch rule"
# (name prefix, rule or None: no images), first match wins: the mini and nano models first.
OPENAI_RULES: tuple[tuple[str, ImageRule | None], ...] = (
    ("gpt-4o-mini", ImageRule(f"{TILES} for gpt-4o-mini (2833 + 5667 per 512 px tile)",
                              openai_tiles(2833, 5667))),
    ("gpt-4.1-mini", ImageRule(f"{PATCHES} for gpt-4.1-mini (32 px patches x 1.62)",
                               openai_patches(1.62))),
    ("gpt-4.1-nano", ImageRule(f"{PATCHES} for gpt-4.1-nano (32 px patches x 2.46)",
                               openai_patches(2.46))),
    ("o4-mini", ImageRule(f"{PATCHES} for o4-mini (32 px patches x 1.72)",
                          openai_patches(1.72))),
    ("o1-mini", None), ("o3-mini", None),  # text only
    *((prefix, ImageRule(f"{TILES} for {prefix} (85 + 170 per 512 px tile)",
                         openai_tiles(85, 170)))
      for prefix in ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-4-turbo", "o1", "o3")),
)
ANTHROPIC = ImageRule("Anthropic's rule (width x height / 750 after resizing)",
                      anthropic_tokens)


def image_rule(model: str) -> ImageRule | None:
    """The rule for `model` (a provider prefix such as OpenRouter's "openai/" is ignored),
    or None when visioneval knows no published rule for it."""
    name = model.lower().rsplit("/", 1)[-1]
    if name.startswith("claude"):
        return ANTHROPIC
    for prefix, rule in OPENAI_RULES:
        if name.startswith(prefix):
            return rule
    return None
