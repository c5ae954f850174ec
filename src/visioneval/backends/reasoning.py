"""A reasoning model's reply is its thinking and then its answer; only the answer is scored.

Reasoning VLMs (Qwen3-VL thinking, GLM-4.xV, DeepSeek-R1-style models) write their thinking
inline as `<think>...</think>` before the answer, or only the closing tag when the chat
template already opened it; servers with a reasoning parser move it to a field of its own
(vLLM, SGLang, DeepSeek: `reasoning_content`; OpenRouter and vLLM since 0.11: `reasoning`),
Anthropic sends `thinking` content blocks and Ollama's /api/chat `message.thinking`. The
protocol readers collect those fields; `split` takes the inline form apart. The reasoning is
kept beside the answer (`Response.reasoning`), never scored.

The inline rule, and where it comes from (the two reference harnesses agree on it):
- A reply that starts (after whitespace) with `<think>` is reasoning up to the last
  `</think>`; the answer is what follows, whitespace trimmed. VLMEvalKit's `split_thinking`
  (vlmeval/inference.py, behind its SPLIT_THINK switch) answers with the text after the last
  `</think>`; lmms-eval's `strip_reasoning_tags` (lmms_eval/api/reasoning.py, on by default)
  removes each `<think>...</think>` block and then keeps the text after the last closing tag.
  Nested or repeated blocks therefore end at the last `</think>`.
- A reply with a `</think>` and no `<think>` before it is reasoning whose opening tag the
  chat template wrote into the prompt (lmms-eval's rule for that case; VLMEvalKit's likewise
  keeps the text after the last `</think>`).
- A reply that opens `<think>` and never closes it is all reasoning and no answer: the model
  ran out of max_tokens while thinking (lmms-eval leaves such text as it is, to be scored as
  a wrong answer; here it is an error, see `settle`).
- Anything else is the answer as it came, untouched: a reply that mentions `<think>` in a
  sentence, or that starts with something else. Tags are matched case-sensitively, as
  lmms-eval does.
- Only `<think>` is a reasoning tag. lmms-eval also strips `<thinking>` (its filter's
  default) or `<analysis>` (its command line's default) and VLMEvalKit only `<think>`; the
  models above all write `<think>`, and `<thinking>` is a word a prompted answer may use.
"""

from __future__ import annotations

from typing import NamedTuple

from visioneval.backends.base import PermanentError
from visioneval.core.records import Response

OPEN, CLOSE = "<think>", "</think>"
CUT_SHORT = frozenset({"length", "max_tokens"})
"""Finish reasons that say the reply hit max_tokens: OpenAI-style servers and Ollama say
"length", Anthropic's stop_reason says "max_tokens"."""
REDACTED = "(redacted_thinking: the provider sent this reasoning encrypted)"


OUT_OF_TOKENS = ("the model spent all of max_tokens reasoning and gave no answer; raise "
                 "--max-tokens")


class OutOfTokens(PermanentError):
    """The model thought until max_tokens ran out and never answered. Sending the same
    request again gets the same reply, so it is final; the fix is a larger --max-tokens."""

    def __init__(self) -> None:
        super().__init__(OUT_OF_TOKENS)


class Split(NamedTuple):
    """A reply taken apart: the answer to score and the reasoning set aside (None: the reply
    had no reasoning part; "" : it had an empty one, as Qwen3 writes with thinking off).
    A named tuple: one is made per reply, and it is the cheapest typed record to make."""

    answer: str
    reasoning: str | None = None
    unclosed: bool = False  # `<think>` was opened and never closed: no answer at all


def split(text: str) -> Split:
    """The inline rule of the module docstring. A plain answer costs one substring test."""
    if "think>" not in text:
        return Split(text)
    last = text.rfind(CLOSE)
    start = len(text) - len(text.lstrip())
    if text.startswith(OPEN, start):
        if last < start:
            return Split("", text[start + len(OPEN):].strip(), unclosed=True)
        return Split(text[last + len(CLOSE):].strip(),
                     text[start + len(OPEN):last].strip())
    if last >= 0 and OPEN not in text[:text.find(CLOSE)]:
        return Split(text[last + len(CLOSE):].strip(), text[:last].strip())
    return Split(text)


def join(*parts: str | None) -> str | None:
    """Reasoning from several places (a field and inline text, several thinking blocks),
    in order; None when none has any text."""
    texts = [p.strip() for p in parts if p and p.strip()]
    return "\n\n".join(texts) if texts else None


def settle(text: str | None, separate: str | None, finish: str | None,
           spent: bool = False) -> Split | None:
    """The answer of a reply whose answer text is `text` (None: the reply has none) and
    whose separately sent reasoning is `separate`; `spent`: the server counted reasoning
    tokens it did not send (OpenAI's o-series). Raises OutOfTokens when the reply has
    reasoning and no answer because max_tokens ran out: the finish reason says so, or
    `<think>` was never closed and the server gave no finish reason. None: no text and
    not that case (the reader says what is missing)."""
    if text and separate is None and "think>" not in text:
        return Split(text)  # a plain answer: the common case, kept cheap
    got = split(text) if text is not None else Split("")
    reasoning = join(separate, got.reasoning)
    if not got.answer and (finish in CUT_SHORT and (reasoning or got.unclosed or spent)
                           or got.unclosed and finish is None):
        raise OutOfTokens()
    if text is None:
        return None
    return Split(got.answer, reasoning, got.unclosed)


def cached(response: Response) -> Response | None:
    """A cached answer stored before reasoning was set aside (its text may still hold the
    `<think>` part), split as a fresh reply would be; None when such a reply had no answer
    because max_tokens ran out (not an answer to reuse: asked again, it is that error)."""
    if response.reasoning is not None or not response.text or "think>" not in response.text:
        return response
    try:
        got = settle(response.text, None, response.finish_reason)
    except OutOfTokens:
        return None
    assert got is not None  # text is not None
    return response.model_copy(update={"text": got.answer, "reasoning": got.reasoning})
