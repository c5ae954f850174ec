"""SalBench's own request variant: lmms-eval's prompt (`--prompt both`), the dataset's question
with lmms-eval's suffix, as a second family on the same rows. SalBench's metrics read it
(its `by_prompt` block, the prompt-effect test and the lmms-eval column of the protocol
table), so it keeps the names it always had: id `<id>@lmms-eval`, group `<config> lmms-eval
prompt`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from visioneval.benchmarks.salbench.prompts import family_group
from visioneval.benchmarks.salbench.spec import LMMS_EVAL_SUFFIX
from visioneval.core.records import Message
from visioneval.variants.kinds import ImageMemo, Variant

FAMILIES = ("paper", "lmms-eval")


class LmmsEvalPrompt(Variant):
    kind = "lmms-eval-prompt"
    help = "the question with lmms-eval's answer-format suffix"
    read_by_benchmark = True

    @property
    def name(self) -> str:
        return "lmms-eval"

    def transform(self) -> str:
        return (f"the question's last text part stripped and {LMMS_EVAL_SUFFIX.strip()!r} "
                "appended, as lmms-eval's SalBench task asks; images as stored")

    def group(self, group: str) -> str:
        return family_group(group, self.name, FAMILIES)

    def metadata(self) -> dict[str, Any]:
        return {"prompt": self.name}

    def messages(self, messages: Sequence[Message], images: ImageMemo
                 ) -> tuple[Message, ...]:
        """The last text part (the query's question or "Task: ..." line) with the suffix;
        zero-shot and few-shot prompts end with it."""
        out = list(messages)
        for i in range(len(out) - 1, -1, -1):
            parts = list(out[i].parts)
            for j in range(len(parts) - 1, -1, -1):
                part = parts[j]
                if isinstance(part, str):
                    parts[j] = part.strip() + LMMS_EVAL_SUFFIX
                    out[i] = Message(out[i].role, tuple(parts))
                    return tuple(out)
        return tuple(out)
