"""An import inside a function says why it is there: it keeps a light command light
(`visioneval --help` and the commands that only read), loads an extra, or waits for a process
of its own. Its reason is a comment on the import itself, on the line directly above it (or
above the group of imports it starts), or once for the whole module in a comment block that
starts with `# Imports inside functions:`. Every other import is at the top of its module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "src" / "visioneval"
BLOCK = "# Imports inside functions:"
PRAGMA = re.compile(r"noqa(:\s*[A-Z]+\d+(,\s*[A-Z]+\d+)*)?|type:\s*ignore(\[[^\]]*\])?|pragma:.*")
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
INDENTED_IMPORT = re.compile(r"^[ \t]+(import|from)\s", re.M)  # only such files are parsed


def _inner_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            visit(child, in_function or isinstance(child, FUNCTIONS))

    visit(tree, False)
    return found


def _says_why(line: str) -> bool:
    """A comment on this line with words besides a linter's or type checker's pragma."""
    if "#" not in line:
        return False
    comment = line.split("#", 1)[1]
    return bool(re.search(r"\w", PRAGMA.sub("", comment.replace("#", " "))))


def unexplained(source: str, name: str) -> list[str]:
    """`name:line` of each import inside a function that gives no reason."""
    lines = source.splitlines()
    if not INDENTED_IMPORT.search(source) or any(line.startswith(BLOCK) for line in lines):
        return []
    import_lines = set()
    inner = _inner_imports(ast.parse(source))
    for node in inner:
        import_lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    missing = []
    for node in inner:
        own = lines[node.lineno - 1:node.end_lineno]
        above = node.lineno - 1
        while above in import_lines and not _says_why(lines[above - 1]):
            above -= 1  # a comment above a group of imports explains the group
        comment_above = above >= 1 and lines[above - 1].strip().startswith("#") \
            and _says_why(lines[above - 1])
        if not (any(_says_why(line) for line in own) or comment_above):
            missing.append(f"{name}:{node.lineno}")
    return missing


def test_every_import_inside_a_function_says_why():
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        missing += unexplained(path.read_text(), str(path.relative_to(PACKAGE.parent)))
    assert missing == [], "imports inside functions without a reason (move them to the " \
        "top of the module, or say why in a comment): " + ", ".join(missing)


def test_the_reader_finds_an_unexplained_import():
    source = '''import json


def plain():
    import os

    return os.sep


def pragma_only():
    import numpy  # noqa: F401


def trailing():
    import numpy as np  # keeps `visioneval --help` light

    return np


def grouped():
    # scipy loads on first use
    import scipy.optimize
    import scipy.stats

    return scipy
'''
    assert unexplained(source, "m.py") == ["m.py:5", "m.py:11"]
    assert unexplained(BLOCK + " every command loads its body on first use.\n" + source,
                       "m.py") == []
