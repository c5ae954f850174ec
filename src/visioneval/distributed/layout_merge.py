"""`visioneval merge` for `visioneval layout --shard K/N` results files.

Each shard's results file records where its samples stood in the whole run's order; the
merge puts them back in that order and recomputes the summary, so the merged file equals
the one a single run writes (apart from `seconds`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from visioneval.distributed.merge import MergeRefused

# What must agree between shards of one layout run (base_dir may differ between machines).
SAME = ("tool", "model", "variants", "ids", "settings", "missing_ids")


def _load(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise MergeRefused(f"{path}: not a readable results file ({exc})") from None
    shard = document.get("shard")
    if not isinstance(shard, dict):
        raise MergeRefused(f"{path} is not a shard (no shard in it); merge takes results "
                           "written with --shard K/N")
    return document


def merge_layout_documents(paths: Sequence[Path], allow_partial: bool
                           ) -> tuple[dict[str, Any], list[int]]:
    """The merged results document and the missing shard indices; MergeRefused names the
    first problem."""
    from visioneval.layout import pipeline

    documents = [(p, _load(p)) for p in paths]
    first_path, first = documents[0]
    count = first["shard"]["count"]
    seen: dict[int, Path] = {}
    for path, doc in documents:
        for key in SAME:
            if doc.get(key) != first.get(key):
                raise MergeRefused(f"{first_path} and {path} are not shards of one run: they "
                                   f"differ in {key}")
        shard = doc["shard"]
        if shard["count"] != count:
            raise MergeRefused(f"{first_path} and {path} are not shards of one run: they "
                               f"differ in shard count ({count} vs {shard['count']})")
        if shard.get("pairs") != first["shard"].get("pairs"):
            raise MergeRefused(f"{first_path} and {path} saw different pair sets "
                               f"({first['shard'].get('pairs')} vs {shard.get('pairs')} pairs)")
        if shard["index"] in seen:
            raise MergeRefused(f"shard {shard['index']}/{count} is given twice: "
                               f"{seen[shard['index']]} and {path}")
        seen[shard["index"]] = path
    missing = [k for k in range(1, count + 1) if k not in seen]
    if missing and not allow_partial:
        raise MergeRefused(f"shard(s) {', '.join(f'{k}/{count}' for k in missing)} missing; "
                           "give their files, or --allow-partial to merge what is there")
    samples: dict[int, dict[str, Any]] = {}
    skipped: dict[int, dict[str, Any]] = {}
    for path, doc in documents:
        shard = doc["shard"]
        for target, items, positions in ((samples, doc.get("samples") or [],
                                          shard.get("positions") or []),
                                         (skipped, doc.get("skipped") or [],
                                          shard.get("skipped_positions") or [])):
            if len(items) != len(positions):
                raise MergeRefused(f"{path}: {len(items)} entries but {len(positions)} "
                                   "positions; the file was edited or cut")
            for position, item in zip(positions, items, strict=True):
                if position in target:
                    raise MergeRefused(f"{path}: sample {item.get('variant')}/{item.get('id')}"
                                       " is also in another shard")
                target[position] = item
    merged_samples = [samples[k] for k in sorted(samples)]
    merged = {k: v for k, v in first.items() if k != "shard"}
    merged |= {"samples": merged_samples, "skipped": [skipped[k] for k in sorted(skipped)],
               "summary": pipeline.summarise(merged_samples),
               "seconds": max(float(doc.get("seconds") or 0) for _, doc in documents),
               "merged_from": [{"file": str(p), "shard": doc["shard"]["index"]}
                               for p, doc in documents]}
    if missing:
        merged["missing_shards"] = [{"index": k, "count": count} for k in missing]
    return merged, missing


def merge_layout(paths: Sequence[Path], out: Path, allow_partial: bool, console: Console,
                 err: Console) -> int:
    """Write the merged results JSON, its CSV and report page; exit 1 if shards are missing
    or samples have a metric error (as `visioneval layout` does)."""
    from visioneval.commands.layout import _print_summary
    from visioneval.layout import pipeline
    from visioneval.report.layout import write_layout_report

    if out.exists() and out.is_dir():
        raise ValueError(f"--out {out} is a directory; give a .json file path for layout "
                         "results")
    if any(out.resolve() == p.resolve() for p in paths):
        raise MergeRefused(f"--out {out} is one of the shards; choose another file")
    document, missing = merge_layout_documents(paths, allow_partial)
    out.parent.mkdir(parents=True, exist_ok=True)
    pipeline.write_json(out, document)
    csv_path = out.with_suffix(".csv")
    pipeline.write_csv(csv_path, document["samples"])
    page = write_layout_report(out)
    _print_summary(console, document)
    console.print(f"{len(document['samples'])} samples from {len(paths)} shard(s) -> {out} "
                  f"and {csv_path}; report: {page}", highlight=False, soft_wrap=True)
    failed = [s for s in document["samples"] if any(k.endswith("_error") for k in s)]
    if missing:
        err.print(f"[yellow]shards {', '.join(map(str, missing))} are missing: the summary "
                  "leaves their samples out[/]", highlight=False)
    return 1 if missing or failed or document["skipped"] else 0
