"""What setting a reasoning model's thinking aside costs per reply.

Times the three reply readers (`parse_chat_response` of the OpenAI and Ollama backends,
`parse_messages_response` of Anthropic's) on a plain one-word answer, on the same answer
after 2,000 characters of inline `<think>` text, and with the thinking in the protocol's own
field; and, for a plain answer, writing a response as JSON (journal and cache) and a cache
hit (`ResponseCache.get`). Run it on the code before
the change too (its `src` first on PYTHONPATH) to compare: the replies are the same JSON.

    uv run python measure/reasoning_split.py
    git archive BEFORE src | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before/src uv run python measure/reasoning_split.py

Results go to stdout as Markdown (microseconds per call, best of 5 repeats); docs/
PERFORMANCE.md records them.
"""

from __future__ import annotations

import tempfile
import timeit
from pathlib import Path
from typing import Any

import visioneval
from visioneval.backends.anthropic import parse_messages_response
from visioneval.backends.ollama import parse_chat_response as parse_ollama
from visioneval.backends.openai import parse_chat_response as parse_openai
from visioneval.backends.replies import MetadataReader
from visioneval.core.records import Response
from visioneval.engine.cache import ResponseCache

THOUGHT = ("Could it be color? The target might differ in color, or in size, or in "
           "orientation; let me look again. ") * 20  # about 2,000 characters
ANSWER = "size"


def openai(content: str, **message: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content, **message}}],
            "usage": {"prompt_tokens": 700, "completion_tokens": 3, "total_tokens": 703}}


def ollama(content: str, **message: Any) -> dict[str, Any]:
    return {"model": "m", "message": {"role": "assistant", "content": content, **message},
            "done": True, "done_reason": "stop", "prompt_eval_count": 700, "eval_count": 3}


def anthropic(content: str, thinking: str | None = None) -> dict[str, Any]:
    blocks = [{"type": "thinking", "thinking": thinking, "signature": "s"}] if thinking else []
    return {"content": [*blocks, {"type": "text", "text": content}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 700, "output_tokens": 3}}


INLINE = f"<think>{THOUGHT}</think>\n\n{ANSWER}"
CASES = [
    ("OpenAI", parse_openai, openai(ANSWER), openai(INLINE),
     openai(ANSWER, reasoning_content=THOUGHT)),
    ("Ollama", parse_ollama, ollama(ANSWER), ollama(INLINE), ollama(ANSWER, thinking=THOUGHT)),
    ("Anthropic", parse_messages_response, anthropic(ANSWER), anthropic(INLINE),
     anthropic(ANSWER, THOUGHT)),
]


def per_call_us(fn: Any, *args: Any, number: int = 20_000) -> float:
    return min(timeit.repeat(lambda: fn(*args), number=number, repeat=5)) / number * 1e6


def main() -> None:
    meta = MetadataReader("benchmark")
    print(f"visioneval from {Path(visioneval.__file__).parent}\n")
    print("| reader | plain answer µs | inline <think> µs | thinking field µs |")
    print("|---|---:|---:|---:|")
    for name, parse, plain, inline, field in CASES:
        cells = [per_call_us(parse, reply, meta) for reply in (plain, inline, field)]
        print(f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
    plain = Response(text=ANSWER, finish_reason="stop", prompt_tokens=700, completion_tokens=3)
    print(f"\nResponse.model_dump_json of a plain answer (journal and cache): "
          f"{per_call_us(plain.model_dump_json):.2f} µs")
    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(Path(tmp) / "c.sqlite3")
        cache.put("k", Response(text=ANSWER, finish_reason="stop", prompt_tokens=700,
                                completion_tokens=3))
        cache.flush()
        print(f"cache hit of a plain answer: {per_call_us(cache.get, 'k'):.2f} µs")


if __name__ == "__main__":
    main()
