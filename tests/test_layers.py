"""The layers of visioneval, folder by folder: every folder and root module of the package
has a layer, and every import (at the top of a file, inside a function or under
TYPE_CHECKING) points to a lower layer. Units of one layer do not import each other, so no
two folders import each other in a circle. docs/architecture.md draws the same layers; the
imports that still point up are listed below, each with why, and the list only shrinks."""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).parents[1] / "src"
PACKAGE = SRC / "visioneval"
DOC = Path(__file__).parents[1] / "docs" / "architecture.md"

# Bottom first. A unit is a folder of the package or one of its root modules; "__init__" is
# the package's own face (the Python API's names, which load on first use).
LAYERS: list[tuple[str, ...]] = [
    ("validation",),
    ("io", "pages", "stats", "validators", "fmt", "excerpts", "terminal",
     "invocation", "shards", "workers"),
    ("stimuli",),
    ("core",),
    ("metrics", "baselines"),
    ("backends",),
    ("cost",),
    ("engine",),
    ("variants", "probe", "canvas", "foreign", "harness"),
    ("epochs",),
    ("loopback",),
    ("evaluators",),
    ("paradigms",),
    ("benchmarks",),
    ("report",),
    ("runs",),
    ("rescore",),
    ("distributed", "suite"),
    ("api", "commands"),
    ("cli",),
    ("__main__", "__init__"),
]

# Imports that still point up (or sideways, within a layer): (importer, imported) -> why.
# The goal is an empty list; an entry that no longer happens fails the test, so it shrinks.
ALLOWED_UP: dict[tuple[str, str], str] = {
}


def unit_of(module: str) -> str:
    """`visioneval.runs.execute` -> "runs"; `visioneval` (its __init__) -> "__init__"."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imported_modules(path: Path) -> list[tuple[str, int]]:
    """Every visioneval module the file imports, with its line (`from visioneval import
    fmt` is visioneval.fmt)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "visioneval":  # a module of the package, or a name of its face
                found += [(f"visioneval.{alias.name}" if _is_module(alias.name)
                           else "visioneval", node.lineno) for alias in node.names]
            else:
                found.append((node.module, node.lineno))
    return [(name, line) for name, line in found
            if name == "visioneval" or name.startswith("visioneval.")]


def _is_module(name: str) -> bool:
    return (PACKAGE / name / "__init__.py").exists() or (PACKAGE / f"{name}.py").exists()


@functools.cache
def unit_edges() -> dict[tuple[str, str], tuple[str, ...]]:
    """(importer unit, imported unit) -> the import sites ("runs/request.py:16")."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(
            ".__init__")
        source = unit_of(module)
        for name, line in imported_modules(path):
            target = unit_of(name)
            if target != source:
                edges[(source, target)].append(f"{path.relative_to(PACKAGE)}:{line}")
    return {edge: tuple(sites) for edge, sites in edges.items()}


def layer_of() -> dict[str, int]:
    return {unit: k for k, units in enumerate(LAYERS) for unit in units}


def units_in_package() -> set[str]:
    found = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    return found | {p.stem for p in PACKAGE.glob("*.py")}


def test_every_folder_and_root_module_has_one_layer():
    listed = [unit for units in LAYERS for unit in units]
    assert len(listed) == len(set(listed)), "a unit on two layers"
    assert set(listed) == units_in_package(), (
        f"without a layer: {sorted(units_in_package() - set(listed))}; "
        f"listed but gone: {sorted(set(listed) - units_in_package())}")


def test_every_import_points_down():
    layer = layer_of()
    up = {edge: sites for edge, sites in unit_edges().items()
          if layer[edge[0]] <= layer[edge[1]] and edge not in ALLOWED_UP}
    assert not up, "imports that point up or sideways:\n" + "\n".join(
        f"  {a} -> {b}: {', '.join(sites)}" for (a, b), sites in sorted(up.items()))


def test_the_allowed_list_holds_only_imports_that_still_point_up():
    layer = layer_of()
    edges = unit_edges()
    stale = [edge for edge in ALLOWED_UP
             if edge not in edges or layer[edge[0]] > layer[edge[1]]]
    assert not stale, f"no longer needed, remove them from ALLOWED_UP: {stale}"


def test_the_checks_see_an_upward_import():
    """The reader is not blind: known imports are found, and one up is caught."""
    edges = unit_edges()
    assert ("runs", "engine") in edges and ("cli", "commands") in edges
    layer = layer_of()
    assert layer["core"] < layer["engine"] < layer["runs"] < layer["cli"]


def test_docs_draw_the_same_layers():
    """docs/architecture.md's block of layers names each layer's units on one line, top
    first, as LAYERS has them bottom first."""
    text = DOC.read_text()
    block = text.split("## The layers", 1)[1].split("```", 2)[1]
    drawn = []
    for line in block.strip("\n").splitlines():
        units = re.match(r"^((?:[\w.]+/?,? ?)+?)\s{2,}", line + "  ")
        if units and not line.startswith(" "):
            drawn.append(tuple(u.strip(",").removesuffix("/").removesuffix(".py")
                               for u in units.group(1).split()))
    assert drawn == [tuple(units) for units in reversed(LAYERS)], drawn
