"""Every relative link in README.md and docs/*.md leads somewhere: a Markdown link's file
exists and its `#anchor` is a heading of that file (as GitHub makes anchors), and a path
the prose gives (`docs/x.md`, `examples/...`, `src/...`) is a file or folder of the
repository (a name of the reader's own, such as a new benchmark `mybench`, aside)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docs_examples import fenced_blocks

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")
DOC_PATH = re.compile(r"(?<![\w/.-])(docs/[\w.-]+\.md)\b")
# A path in backticks from the repository's top: a page, an example, the package's code
# (`benchmarks/x` is also the package's own folder, named so in prose; another repository's
# `src/...` or `docs/...` is that repository's).
TICKED = re.compile(r"`(docs/[\w.-]+\.md|examples/[\w./-]+|src/visioneval/[\w./-]*)`")
# The reader's own names: a new benchmark `mybench`, `my/questions.jsonl`.
THEIRS = re.compile(r"(?:^|/)my|[<>*{}]")


def prose(page: Path) -> str:
    """The page without its fenced blocks (a link in a code example is not a link)."""
    lines = page.read_text().splitlines()
    for _, code, line in fenced_blocks(page):
        for i in range(line - 1, min(line + code.count("\n"), len(lines))):
            lines[i] = ""
    return "\n".join(lines)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercased, punctuation other than - and _ dropped,
    spaces made hyphens (inline code and emphasis marks dropped with the punctuation)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in prose(page).splitlines():
        match = re.match(r"^#{1,6} +(.+?) *#*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def test_the_slugs_are_githubs():
    assert slug("Every sample: `visioneval view`") == "every-sample-visioneval-view"
    assert slug("Krippendorff's alpha") == "krippendorffs-alpha"
    assert slug("run_format") == "run_format"
    assert slug("Through the loopback observer, default design") == \
        "through-the-loopback-observer-default-design"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_leads_to_a_file_and_heading(page):
    text = prose(page)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{target}: no heading #{anchor} in {where.name}")
    # A page named in a code example's comment is one a reader follows too.
    for path in DOC_PATH.findall(page.read_text()) + TICKED.findall(text):
        if not THEIRS.search(path) and not (ROOT / path).exists():
            broken.append(f"{path}: no such file in the repository")
    assert not broken, f"{page.name}:\n" + "\n".join(broken)
