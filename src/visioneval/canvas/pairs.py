"""Finding GT / generated pairs in CANVAS's directory layout.

    <base>/benchmarks/generation_gt/{gid}.png, {gid}.json   (+ {gid}-expected-tools.json)
    <base>/results/generation_gen/{model}/{variant}/{gid}-{model}-{variant}/
        {folder}.png, {folder}-figma-hierarchy.json (else {folder}.json),
        {folder}-json-response.json (or any other *-json-response.json)

As in CANVAS's pipeline (`eval_pipeline.py@dd1da004`, `_collect_generation_pairs`): gid = the
folder name before "-{model}"; a pair needs both images and both layout files. Unlike
CANVAS's pipeline, a pair that lacks one of them is not dropped silently but listed as skipped with
the reason. The response file is optional (CANVAS's pipeline does not require it either): without
it the tool metrics are absent with the reason.

The response file is any `*-json-response.json` in the folder, as CANVAS's
`tool_usage_metric.py` globs it. CANVAS's code takes the first the file system lists; here
`{folder}-json-response.json` wins when it is there, else the first by name, and a choice
among several is noted on the pair (the run prints it and keeps it in the sample).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Pair:
    id: str
    variant: str
    folder: str
    gt_image: Path
    gt_json: Path
    gen_image: Path
    gen_json: Path
    response: Path | None  # None: no -json-response.json
    expected_tools: Path | None  # None: no {gid}-expected-tools.json
    response_note: str | None = None  # why this response file, when several match


@dataclass(frozen=True, slots=True)
class Skipped:
    id: str
    variant: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "variant": self.variant, "reason": self.reason}


def gt_dir(base: Path) -> Path:
    return base / "benchmarks" / "generation_gt"


def results_dir(base: Path, model: str, variant: str) -> Path:
    return base / "results" / "generation_gen" / model / variant


def _problem(path: Path) -> str | None:
    """Why `path` cannot be used, or None."""
    if not path.exists():
        return f"missing {path}"
    if not path.is_file():
        return f"{path} is not a regular file"
    if not os.access(path, os.R_OK):
        return f"{path} is not readable"
    return None


def collect_pairs(base: Path, model: str, variant: str) -> tuple[list[Pair], list[Skipped]]:
    """Pairs sorted by id; FileNotFoundError when the results folder is missing."""
    folder_root = results_dir(base, model, variant)
    if not folder_root.is_dir():
        raise FileNotFoundError(_missing_results_message(base, model, variant))
    gts = gt_dir(base)
    pairs: list[Pair] = []
    skipped: list[Skipped] = []
    for item in sorted(folder_root.iterdir(), key=lambda p: p.name):
        if not item.is_dir():
            continue
        name = item.name
        gid = name.split(f"-{model}")[0]
        gen_json = next((p for p in (item / f"{name}-figma-hierarchy.json",
                                     item / f"{name}.json") if p.exists()),
                        item / f"{name}-figma-hierarchy.json")
        files = [gts / f"{gid}.png", gts / f"{gid}.json", item / f"{name}.png", gen_json]
        problems = [p for p in map(_problem, files) if p]
        if not gen_json.exists():  # name both spellings CANVAS accepts
            problems[-1] = f"missing {gen_json} (or {item / (name + '.json')})"
        if problems:
            skipped.append(Skipped(gid, variant, "; ".join(problems)))
            continue
        response, note = response_file(item)
        expected = gts / f"{gid}-expected-tools.json"
        pairs.append(Pair(id=gid, variant=variant, folder=name, gt_image=files[0],
                          gt_json=files[1], gen_image=files[2], gen_json=gen_json,
                          response=response, response_note=note,
                          expected_tools=expected if expected.exists() else None))
    return pairs, skipped


def response_file(item: Path) -> tuple[Path | None, str | None]:
    """The folder's tool-response file and, when several match, a note saying which."""
    found = sorted((p for p in item.glob("*-json-response.json") if p.is_file()),
                   key=lambda p: p.name)
    own = item / f"{item.name}-json-response.json"
    if own in found or len(found) <= 1:
        return (own if own in found else found[0] if found else None), None
    names = ", ".join(p.name for p in found)
    return found[0], (f"{len(found)} files match *-json-response.json: {names}; used "
                      f"{found[0].name} (the first by name)")


def _missing_results_message(base: Path, model: str, variant: str) -> str:
    root = base / "results" / "generation_gen"
    if not root.is_dir():
        return (f"{root} not found: is {base} a CANVAS directory (benchmarks/generation_gt "
                "and results/generation_gen)?")
    models = sorted(p.name for p in root.iterdir() if p.is_dir())
    if model not in models:
        return f"no results for model {model!r} in {root} (models: {', '.join(models) or '-'})"
    variants = sorted(p.name for p in (root / model).iterdir() if p.is_dir())
    return (f"no results for variant {variant!r} of {model} in {root / model} "
            f"(variants: {', '.join(variants) or '-'})")


def select(pairs: list[Pair], skipped: list[Skipped], ids: list[str] | None
           ) -> tuple[list[Pair], list[Skipped], list[str]]:
    """Keep the wanted ids; ValueError if none matches. Returns the ids not found too."""
    if not ids:
        return pairs, skipped, []
    wanted = set(ids)
    kept = [p for p in pairs if p.id in wanted]
    kept_skipped = [s for s in skipped if s.id in wanted]
    found = {p.id for p in kept} | {s.id for s in kept_skipped}
    if not found:
        known = sorted({p.id for p in pairs} | {s.id for s in skipped})
        shown = ", ".join(known[:10]) + (" ..." if len(known) > 10 else "")
        raise ValueError(f"no sample matches --ids {','.join(ids)} (samples: {shown or '-'})")
    return kept, kept_skipped, [i for i in ids if i not in found]
