"""Docs, code, tests and benchmark scripts speak of what a user can look up: the papers,
lmms-eval, VLMEvalKit, IllusionBench's Evaluator.py, CANVAS's reference code and
visioneval. Words that point at documents a user never sees fail here with file:line.
The patterns are built from pieces so that this file does not match itself."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("docs", "src", "tests", "benchmarks", "examples", "README.md")
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


def hits(path: Path) -> list[str]:
    try:
        text = path.read_bytes().decode()
    except (OSError, UnicodeDecodeError):
        return []  # binary data (parquet, images) or a file deleted in the work tree
    if "\0" in text:
        return []
    where = path.relative_to(ROOT)
    return [f"{where}:{number}: {pattern.search(line).group(0)!r} in {line.strip()[:120]}"
            for number, line in enumerate(text.splitlines(), 1)
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
    assert not [text for text in good if any(p.search(text) for p in FORBIDDEN)]


def test_docs_code_and_tests_use_no_words_a_user_cannot_place():
    files = tracked_files()
    assert any(p.name == "README.md" for p in files) and len(files) > 50
    found = [line for path in files for line in hits(path)]
    assert not found, "\n".join(found)
