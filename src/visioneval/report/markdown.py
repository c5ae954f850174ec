"""Values as literal Markdown text, for the tables `compare` and `compare --reference` write."""

from __future__ import annotations

import html
import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]#|~])")


def md_escape(value: object) -> str:
    """A value as literal Markdown text: HTML's `&`, `<`, `>` as entities (so a model name
    holding markup is shown, never rendered), Markdown punctuation backslash-escaped (so
    `|` cannot add a table column and `*`, `_`, `[` cannot format or link), and line breaks
    as spaces (so a value cannot end a table row)."""
    text = html.escape(str(value), quote=False)
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return re.sub(r"[\r\n]+", " ", text)
