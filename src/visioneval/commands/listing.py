"""`visioneval list`: what this visioneval has (benchmarks, builtin models, request variants,
backends), each with one line, read from the code's own definitions: the registry's
benchmarks and their summaries, the builtin backend's baselines and the benchmarks each
fits (`BenchmarkDefinition.builtin_models`, which reads no data), the variant kinds and each
benchmark's own, the backends a user may name."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from rich.console import Console

from visioneval.backends.builtin import MODELS
from visioneval.backends.registry import CHOICES, BackendSpec, key_env, resolved_base_url
from visioneval.commands.common import consoles, guarded
from visioneval.core import registry
from visioneval.core.benchmark import BenchmarkDefinition
from visioneval.variants.kinds import BUILTIN

WIDTH = 100


@dataclass(frozen=True)
class Entry:
    name: str
    text: str


@dataclass
class Part:
    title: str
    entries: list[Entry] = field(default_factory=list)


def list_() -> int:
    """`visioneval list`: every part printed; exit 0, or 2 with one line."""
    console, err = consoles()

    def action() -> int:
        show(listing(), console)
        return 0

    return guarded(err, action)


def listing() -> list[Part]:
    definitions = [registry.definition(name) for name in registry.names()]
    return [_benchmarks(definitions), _builtin_models(definitions), _variants(definitions),
            _backends()]


def _benchmarks(definitions: list[BenchmarkDefinition]) -> Part:
    return Part("Benchmarks (visioneval NAME --help: each one's options)",
                [Entry(d.name, d.summary) for d in definitions])


def _builtin_models(definitions: list[BenchmarkDefinition]) -> Part:
    fitting = {d.name: (d.builtin_models(), d.builtin_note) for d in definitions}
    part = Part("Builtin models (--backend builtin --model NAME: offline, no server)")
    for model, what in MODELS.items():
        fits = [f"{name} ({note})" if note else name
                for name, (models, note) in fitting.items() if model in models]
        part.entries.append(Entry(model, f"{what}\nfits {', '.join(fits) or 'no benchmark'}"))
    return part


def _variants(definitions: list[BenchmarkDefinition]) -> Part:
    part = Part("Request variants (--variant NAME, sent beside every sample; a list: "
                "jpeg:90,50,20)", [Entry(kind.usage(), kind.help) for kind in BUILTIN])
    for definition in definitions:
        for own in definition.listed_variants():
            part.entries.append(Entry(own.name, f"{definition.name} only, asked by "
                                                f"{own.asked_by}: {own.help}"))
    return part


def _backends() -> Part:
    part = Part("Backends (--backend NAME; keys are read from the environment only)")
    for kind, what in CHOICES.items():
        spec = BackendSpec(kind=kind, model="-")
        url, key = resolved_base_url(spec), key_env(spec)
        where = [f"default {url}" if url else "", f"key in {key}" if key else ""]
        shown = ", ".join(w for w in where if w)
        part.entries.append(Entry(kind, f"{what}\n{shown}" if shown else what))
    return part


def lines(parts: list[Part], width: int = WIDTH) -> list[str]:
    """Each part as a heading and its entries, names in a column, text wrapped between
    words to at most `width` columns (each line of an entry's text starts a new line)."""
    out: list[str] = []
    for part in parts:
        if out:
            out.append("")
        out.extend(textwrap.wrap(part.title, width, break_on_hyphens=False))
        column = max(len(e.name) for e in part.entries) + 4
        for entry in part.entries:
            wrapped = [line for paragraph in entry.text.split("\n")
                       for line in textwrap.wrap(paragraph, width - column,
                                                 break_on_hyphens=False) or [""]]
            out.append(f"  {entry.name.ljust(column - 2)}{wrapped[0]}".rstrip())
            out.extend(" " * column + line for line in wrapped[1:])
    return out


def show(parts: list[Part], console: Console) -> None:
    for line in lines(parts, min(console.width, WIDTH)):
        console.print(line, highlight=False, markup=False, soft_wrap=True,
                      style="bold" if line and not line.startswith(" ") else None)
