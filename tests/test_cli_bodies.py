"""The rule of cli/ (docs/architecture.md): a module there declares typer commands and their
options, and each command's body is one call into commands/, imported inside the command
so that `visioneval --help` loads none of them. The exceptions are listed with why, and the
list only shrinks."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).parents[1] / "src" / "visioneval" / "cli"

# (module, command function) -> why its body is more than one call into commands/.
NOT_YET: dict[tuple[str, str], str] = {
}
# Modules that import commands/ when they load, with why.
LOADS_COMMANDS: dict[str, str] = {
    "generated.py": "a benchmark's command is built from RunFlags (commands/flags.py)",
}


def _commands(tree: ast.Module) -> list[ast.FunctionDef]:
    """The functions a `@something.command(...)` decorator registers."""
    def registers(decorator: ast.expr) -> bool:
        func = decorator.func if isinstance(decorator, ast.Call) else decorator
        return isinstance(func, ast.Attribute) and func.attr == "command"

    return [node for node in tree.body if isinstance(node, ast.FunctionDef)
            and any(registers(d) for d in node.decorator_list)]


def _is_one_call_into_commands(function: ast.FunctionDef) -> bool:
    """Docstring, imports from visioneval.commands, then `raise typer.Exit(f(...))` with f
    one of the names imported."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    imported: set[str] = set()
    while body and isinstance(body[0], ast.ImportFrom):
        if not (body[0].module or "").startswith("visioneval.commands"):
            return False
        imported |= {alias.asname or alias.name for alias in body[0].names}
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise):
        return False
    exc = body[0].exc
    return (isinstance(exc, ast.Call) and ast.unparse(exc.func) == "typer.Exit"
            and len(exc.args) == 1 and isinstance(exc.args[0], ast.Call)
            and isinstance(exc.args[0].func, ast.Name) and exc.args[0].func.id in imported)


def _bodies() -> dict[tuple[str, str], bool]:
    return {(path.name, function.name): _is_one_call_into_commands(function)
            for path in sorted(CLI.glob("*.py"))
            for function in _commands(ast.parse(path.read_text()))}


def test_each_command_is_one_call_into_commands():
    found = _bodies()
    assert len(found) >= 15, "the reader sees too few commands"
    wrong = sorted(f"{module}: {name}" for (module, name), ok in found.items()
                   if not ok and (module, name) not in NOT_YET)
    assert not wrong, "commands whose body is more than one call into commands/: " + \
        ", ".join(wrong)


def test_the_exceptions_still_are_exceptions():
    found = _bodies()
    done = [key for key in NOT_YET if found.get(key, True)]
    assert not done, f"one call into commands/ now, remove them from NOT_YET: {done}"


def test_the_reader_tells_a_body_with_logic():
    source = ("@app.command()\ndef f(x: int) -> None:\n    '''Doc.'''\n"
              "    from visioneval.commands.f import f as command\n\n"
              "    raise typer.Exit(command(x))\n")
    assert all(_is_one_call_into_commands(f) for f in _commands(ast.parse(source)))
    with_logic = source.replace("    raise", "    x += 1\n    raise")
    assert not any(_is_one_call_into_commands(f) for f in _commands(ast.parse(with_logic)))
    elsewhere = source.replace("visioneval.commands.f", "visioneval.report.f")
    assert not any(_is_one_call_into_commands(f) for f in _commands(ast.parse(elsewhere)))


def test_cli_modules_load_no_command_body():
    """Imports at a module's top level (not under TYPE_CHECKING, not in a function) run
    on `visioneval --help`."""
    loading = set()
    for path in sorted(CLI.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and \
                    (node.module or "").startswith("visioneval.commands"):
                loading.add(path.name)
    assert loading == set(LOADS_COMMANDS), sorted(loading ^ set(LOADS_COMMANDS))
