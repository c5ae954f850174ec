"""`ocr`: is the extracted text the expected text, and are the keywords there?

Text similarity is difflib's ratio between the two texts after Unicode NFKC, lowercasing and
collapsing white space (1.0 = identical). Keywords (option `keywords`: a list or a comma-
separated string) count when they occur as whole words, case-insensitively; `details.
missing_keywords` lists the others. The score is the mean of the parts that apply:
similarity when an expected text is given, keyword coverage when keywords are given.
Default pass threshold 0.7 (as AgentV's `ocr_validator.py` uses).
"""

from __future__ import annotations

import difflib
import re
import sys
import unicodedata
from typing import Any

from visioneval.validators.result import EvalResult

THRESHOLD = 0.7


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, normalise(a), normalise(b), autojunk=False).ratio()


def keyword_list(keywords: Any) -> list[str]:
    if keywords is None:
        return []
    if isinstance(keywords, str):
        keywords = keywords.split(",")
    return [k.strip() for k in keywords if str(k).strip()]


def has_keyword(text: str, keyword: str) -> bool:
    pattern = r"(?<!\w)" + r"\s+".join(map(re.escape, normalise(keyword).split())) + r"(?!\w)"
    return re.search(pattern, normalise(text)) is not None


def validate(output: str, expected_output: str, input_text: str = "",
             threshold: float = THRESHOLD, keywords: Any = None, **_: Any) -> dict[str, Any]:
    wanted = keyword_list(keywords)
    if not expected_output.strip() and not wanted:
        return EvalResult.error("nothing to compare: give expected_output or keywords").model_dump()
    parts: dict[str, float] = {}
    details: dict[str, Any] = {}
    if expected_output.strip():
        parts["similarity"] = similarity(output, expected_output)
    if wanted:
        found = [k for k in wanted if has_keyword(output, k)]
        parts["keyword_coverage"] = len(found) / len(wanted)
        details["missing_keywords"] = [k for k in wanted if k not in found]
        details["found_keywords"] = found
    score = sum(parts.values()) / len(parts)
    return EvalResult.processed(score, threshold, **parts, **details).model_dump()


if __name__ == "__main__":
    from visioneval.validators.protocol import main

    sys.exit(main(validate))
