"""Docs, code, tests and benchmark scripts speak of what a user can look up: the papers,
lmms-eval, VLMEvalKit, IllusionBench's Evaluator.py, CANVAS's reference code and
visioneval. Words that point at documents a user never sees fail here with file:line.
The patterns are built from pieces so that this file does not match itself."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("docs", "src", "tests", "measure", "examples", "README.md")
SKIPPED_DIRS = {".venv", ".git", "__pycache__", ".mypy_cache", ".pytest_cache",
                ".ruff_cache", "node_modules"}

SEED, SPEC, ISSUE, PLAN = "se" + "ed", "sp" + "ec", "iss" + "ue", "pl" + "an"
NOTES = "no" + "tes"
# A random seed may follow "the" only when the words after it say so.
RANDOM_SEED = r"(?! (?:is fixed|value|of the (?:random|draw|bootstrap))\b)"
FORBIDDEN = [re.compile(p, re.IGNORECASE) for p in (
    rf"\b{SEED}[- ](?:{PLAN}|era)\b",
    rf"\b{SEED}s'",
    rf"\b{SEED}'s\b",
    rf"\bthe {SEED}s\b",
    rf"\bthe {SEED}\b{RANDOM_SEED}",
    rf"from-the-{SEED}s",
    rf"{SEED}s?_(?:{PLAN}|era|parity|shaped|quick)",
    rf"_the_{SEED}s?_",
    rf"\bthe {SPEC}\b",
    rf"\b{SPEC}'s\b",
    rf"evaluators-{SPEC}",
    rf"\bthe {ISSUE}(?:'s)?\b",
    rf"\b{ISSUE}s? #?\d+",
    rf"\({ISSUE}\b",
    rf"\bresearch {NOTES}?\b",
    r"\bresearch/\w+\.md\b",
    rf"\b{PLAN}ning\b",
    rf"\bthe {PLAN}(?:'s)?\b",
    rf"_the_{PLAN}s?_",
    rf"salbench-eval-{PLAN}",
    rf"\bsalbench {PLAN}\b",
    r"\bdesign documents?\b",
    rf"\b{NOTES} §",
    r"\btickets?\b",
)]


def tracked_files() -> list[Path]:
    """The scanned part of the tree: git's tracked and new (not ignored) files, or a walk
    when git is absent."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard", "--", *SCANNED], cwd=ROOT,
                             capture_output=True, check=True, timeout=60).stdout
        return [ROOT / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        found: list[Path] = []
        for top in SCANNED:
            path = ROOT / top
            if path.is_file():
                found.append(path)
            elif path.is_dir():
                found += [p for p in path.rglob("*") if p.is_file()
                          and not SKIPPED_DIRS.intersection(p.relative_to(ROOT).parts)]
        return found


# Every pattern holds one of these words: only a line that holds one is searched (a plain
# substring search first; the patterns on every line of every file took over a second).
KEYWORDS = (SEED, SPEC, ISSUE, PLAN, NOTES, "research", "design " + "document", "tick" + "et")


def hits(path: Path) -> list[str]:
    try:
        text = path.read_bytes().decode()
    except (OSError, UnicodeDecodeError):
        return []  # binary data (parquet, images) or a file deleted in the work tree
    return [] if "\0" in text else hits_in(text, path.relative_to(ROOT))


def hits_in(text: str, where: Path | str = "") -> list[str]:
    """Each forbidden phrase in `text`, as "where:line: phrase in the line"."""
    if not any(word in text.lower() for word in KEYWORDS):
        return []
    return [f"{where}:{number}: {pattern.search(line).group(0)!r} in {line.strip()[:120]}"
            for number, line in enumerate(text.splitlines(), 1)
            if any(word in line.lower() for word in KEYWORDS)
            for pattern in FORBIDDEN if pattern.search(line)]


def test_the_patterns_catch_what_they_are_for():
    bad = [f"the {SEED}'s pipeline", f"the {SEED} plan", f"{SEED}-era code", f"the {SEED}s",
           f"the {SPEC}'s judge names", f"({ISSUE} 11)", f"research {NOTES} §5",
           f"the {PLAN}'s defaults", f"the {PLAN}ning repository", f"test_{SEED}_parity",
           f"the SalBench {PLAN}'s CSV", f"{ISSUE} 9: empty runs"]
    good = ["--sample-seed 0", f"drawn with the random {SEED}", f"the {SEED} is fixed",
            f"{SEED}=3", "seeded", f"with {SEED}s 0..N-1", f"the same {SEED}",
            f"benchmark.{PLAN}()", "lmms-eval PR #744", "a note on the cell"]
    assert all(any(p.search(text) for p in FORBIDDEN) for text in bad)
    # each pattern holds a keyword, so the line filter in `hits` never hides a match
    assert all(any(word in p.pattern.lower() for word in KEYWORDS) for p in FORBIDDEN)
    assert all(hits_in(text) for text in bad)
    assert not [text for text in good if any(p.search(text) for p in FORBIDDEN)]


def test_docs_code_and_tests_use_no_words_a_user_cannot_place():
    files = tracked_files()
    assert any(p.name == "README.md" for p in files) and len(files) > 50
    found = [line for path in files for line in hits(path)]
    assert not found, "\n".join(found)


# Documents and references a user of visioneval does not have: the project's own copies of
# the sources' facts (kept for the tests) and another repository's working notes.
UNPLACEABLE = re.compile(r"reference_notes|evaluation[ _]" + PLAN, re.IGNORECASE)
USER_FACING = ("docs", "src", "examples", "README.md")


def test_docs_and_code_cite_what_a_user_can_open():
    files = [p for p in tracked_files()
             if p.relative_to(ROOT).parts[0] in USER_FACING]
    assert any(p.name == "glossary.md" for p in files)
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
             for p in files if p.suffix in (".md", ".py", ".json", ".toml", ".yaml", ".html")
             for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
             if UNPLACEABLE.search(line)]
    assert not found, "\n".join(found)


# Words the terminal must not print: the code's own names for things (a suite's lanes, the
# journal, a probe's canaries, a variant family, a server's `root`, a run's headline) and
# a pull request by its number alone. The pages explain the few they use (docs/glossary.md).
TERMINAL_WORDS = re.compile(
    r"\blanes?\b|\bjournal(?:l?ed)?\b|\bcanar(?:y|ies)\b(?! \()|\bfamil(?:y|ies)\b"
    r"|\(root |\bheadlines?\b|\bunits? rated\b|(?<!lmms-eval )\bPR #\d+", re.IGNORECASE)


def terminal_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that can reach a terminal or a page: not docstrings
    (of modules, classes, functions, attributes), not a pydantic field's `description`
    (the schema, which docs/run-files.md explains)."""
    import ast

    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            skipped.add(id(node.value))
        if isinstance(node, ast.keyword) and node.arg == "description":
            skipped.update(id(n) for n in ast.walk(node.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in skipped and " " in node.value]


def shown(template: str) -> str:
    """A jinja2 template without its comments and tags (their lines kept, blank)."""
    def blank(match: re.Match) -> str:
        return "\n" * match.group(0).count("\n")

    return re.sub(r"\{#.*?#\}|\{\{.*?\}\}|\{%.*?%\}", blank, template, flags=re.DOTALL)


@pytest.mark.slow  # reads every template and string of the package
def test_terminal_strings_use_the_users_words():
    bad = ["suite x: 3 runs in 2 lane(s)", "its journal line no longer parses",
           "sending 160 canary images", "openai m (root /ckpt)", "the second request family",
           "headline F1", "1 unit rated at least twice", "a bug since PR #744"]
    good = ["canary (reads the resolution probe's stripes)", "lmms-eval PR #744",
            "PRAGMA journal_mode=WAL", "openai m (checkpoint /ckpt)", "planes of the image"]
    assert all(TERMINAL_WORDS.search(text) for text in bad)
    assert not [text for text in good if TERMINAL_WORDS.search(text)]
    found = [f"{path.relative_to(ROOT)}:{line}: {text[:100]!r}"
             for path in sorted((ROOT / "src").rglob("*.py"))
             for line, text in terminal_strings(path) if TERMINAL_WORDS.search(text)]
    templates = [f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
                 for path in sorted((ROOT / "src").rglob("*.html"))
                 for n, line in enumerate(shown(path.read_text()).splitlines(), 1)
                 if TERMINAL_WORDS.search(line)]
    assert not found + templates, "\n".join(found + templates)
