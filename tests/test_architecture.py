"""The layering docs/architecture.md describes, read from the code's own imports (every
import, including those inside functions and under TYPE_CHECKING)."""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping, Set
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src"
PACKAGE = SRC / "visioneval"
PLUGINS = ("visioneval.benchmarks", "visioneval.evaluators")
ABOVE_CORE = ("visioneval.benchmarks", "visioneval.evaluators", "visioneval.report",
              "visioneval.rescore", "visioneval.commands", "visioneval.cli", "visioneval.api",
              "visioneval.distributed", "visioneval.suite", "visioneval.runs.session",
              "visioneval.runs")


def _module(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Modules this file imports (`from a import b` counts as a.b when a.b is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("visioneval")}


@functools.cache  # read once for the module's tests (~0.6 s a reading); never changed
def _graph() -> dict[str, frozenset[str]]:
    files = {_module(p): p for p in PACKAGE.rglob("*.py")}
    return {name: frozenset(i for i in _imports(path) if i in files and i != name)
            for name, path in files.items()}


def _under(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _offenders(graph: Mapping[str, Set[str]], where: tuple[str, ...],
               forbidden: tuple[str, ...]) -> list[str]:
    """Imports from modules in (or under) `where` of modules in (or under) `forbidden`."""
    return sorted(f"{m} -> {i}" for m, imported in graph.items()
                  if _under(m, where) for i in imported if _under(i, forbidden))


@pytest.mark.slow  # imports the package in a subprocess
def test_core_imports_no_benchmark_report_or_command():
    assert _offenders(_graph(), ("visioneval.core",), ABOVE_CORE) == []


def test_only_the_plugins_name_a_plugin():
    """A benchmark is one folder and one registry line (a string, never an import)."""
    graph = {m: imported for m, imported in _graph().items() if not _under(m, PLUGINS)}
    assert sorted(f"{m} -> {i}" for m, imported in graph.items() for i in imported
                  if _under(i, PLUGINS)) == []


def test_the_python_api_imports_no_command():
    assert _offenders(_graph(), ("visioneval.api",),
                      ("visioneval.commands", "visioneval.cli")) == []


def test_no_import_circle():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert circles == []


def test_the_checks_see_a_circle_and_an_offender():
    """The graph reader is not blind: a known import is found."""
    graph = _graph()
    assert "visioneval.core.records" in graph["visioneval.core.store"]
    assert _offenders({"visioneval.core.x": {"visioneval.report.page"}},
                      ("visioneval.core",), ABOVE_CORE) == ["visioneval.core.x -> "
                                                            "visioneval.report.page"]
