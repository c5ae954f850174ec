"""docs/run-files.md's key tables are the models' own (core/runfiles.py and each benchmark's
metrics model): a key added to a model and not to the page, or the other way round, fails
here, and the message holds the tables to paste."""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path

from pydantic import BaseModel, RootModel

from visioneval.core import registry
from visioneval.core.runfiles import BenchmarkPlan, Metrics, RunInfo

DOC = Path(__file__).parents[1] / "docs" / "run-files.md"
START, END = "<!-- tables from the models -->", "<!-- end of the tables -->"


def type_name(tp: typing.Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(a) for a in typing.get_args(tp))
    if origin is typing.Literal:
        return " or ".join(f'"{a}"' for a in typing.get_args(tp))
    if origin is not None:
        args = ", ".join(type_name(a) for a in typing.get_args(tp))
        return f"{getattr(origin, '__name__', origin)}[{args}]"
    if tp is type(None):
        return "null"
    if tp is typing.Any:
        return "any"
    return getattr(tp, "__name__", str(tp))


def _models_in(tp: typing.Any) -> list[type]:
    found = []
    for arg in typing.get_args(tp) or [tp]:
        if typing.get_args(arg):
            found += _models_in(arg)
        elif isinstance(arg, type) and (issubclass(arg, BaseModel)
                                        or dataclasses.is_dataclass(arg)):
            found.append(arg)
    return found


def _fields(model: type) -> list[tuple[str, typing.Any, bool, str]]:
    if dataclasses.is_dataclass(model):
        hints = typing.get_type_hints(model)
        return [(f.name, hints[f.name], True, "") for f in dataclasses.fields(model)]
    assert issubclass(model, BaseModel)
    return [(name, f.annotation, f.is_required(), f.description or "")
            for name, f in model.model_fields.items()]


def tables(roots: list[type]) -> str:
    """A table per model reachable from `roots`, in the order they are met."""
    seen: list[type] = []
    queue = list(roots)
    while queue:
        model = queue.pop(0)
        if model in seen:
            continue
        seen.append(model)
        if issubclass(model, RootModel):
            queue += _models_in(model.model_fields["root"].annotation)
        else:
            queue += [m for _, tp, _, _ in _fields(model) for m in _models_in(tp)]
    out = []
    for model in seen:
        doc = " ".join((model.__doc__ or "").split())
        if issubclass(model, RootModel):
            out += [f"**{model.__name__}**: "
                    f"`{type_name(model.model_fields['root'].annotation)}`. {doc}", ""]
            continue
        is_open = issubclass(model, BaseModel) and model.model_config.get("extra") == "allow"
        out += [f"**{model.__name__}**{' (open: other keys are kept)' if is_open else ''}. "
                f"{doc}", "", "| key | type | what it holds |", "|---|---|---|"]
        for name, tp, required, text in _fields(model):
            cell = f"required. {text}".strip() if required else text
            out.append(f"| `{name}` | `{type_name(tp)}` | {cell} |")
        out.append("")
    return "\n".join(out)


def expected() -> str:
    metrics = [registry.definition(name).metrics_model for name in registry.names()]
    return "\n".join(["### run.json", "", tables([RunInfo]),
                      "### What `Benchmark.plan()` returns", "", tables([BenchmarkPlan]),
                      "### metrics.json", "", tables([Metrics, *metrics])]).rstrip() + "\n"


def test_the_page_lists_every_key_of_the_models():
    text = DOC.read_text()
    assert START in text and END in text
    shown = text[text.index(START) + len(START):text.index(END)].strip() + "\n"
    want = expected()
    assert shown == want, f"docs/run-files.md's tables differ from the models; they are:\n{want}"
