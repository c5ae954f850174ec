"""What a record keeps of a parser's output: what the parser extracted, never a second copy
of a long answer. The answer itself is in `response.text`; a long extracted piece is kept as
its start and a reference (length and sha256), so distinct pieces stay distinct. And what a
page embeds of an answer (`capped`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

PIECE_CHARS = 200  # an extracted piece up to this long is kept as it is
HEAD_CHARS = 80  # of a longer one, this much is kept before the reference
MAX_PIECES = 20  # extracted pieces kept per parser beyond the class labels
RESPONSE_CHARS = 4000  # of an answer, what the sample browser embeds


def excerpt(text: str, limit: int = PIECE_CHARS, head: int = HEAD_CHARS) -> str:
    """`text` when at most `limit` long, else its first `head` characters and a reference
    to the whole (length and sha256)."""
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{text[:head]}… [{len(text)} chars, sha256 {digest}]"


def pieces(found: Iterable[str], labels: Iterable[str]) -> list[str]:
    """A parser's set of pieces as a record keeps it, sorted: every class label found, and
    at most MAX_PIECES other pieces (each an `excerpt`), then one marker for the rest.
    Class membership is exact; the count of pieces is not, so per-sample scores are taken
    from the record's scores, computed on the full set."""
    known = set(labels)
    found = set(found)
    kept = sorted(found & known)
    others = sorted(found - known)
    kept += sorted(excerpt(p) for p in others[:MAX_PIECES])
    if len(others) > MAX_PIECES:
        kept.append(f"… [{len(others) - MAX_PIECES} more pieces]")
    return kept


def capped(text: str, limit: int = RESPONSE_CHARS) -> str:
    """What the page embeds of one answer: the start, and how much is left out (a 10 MB
    answer would otherwise be 10 MB of every page that shows it)."""
    if len(text) <= limit:
        return text
    return (f"{text[:limit]}... ({len(text) - limit} more characters; full text in "
            "samples.jsonl)")
