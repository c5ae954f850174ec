"""lmms-eval `--log_samples` lines as each lmms-eval version writes them, for the rescore
tests. Field order and shapes follow lmms-eval's own code (docs/rescore.md):

- "0.3" (v0.3.5, the first release with SalBench): `doc` without keys holding "image",
  `arguments` as `{index: gen_kwargs key}`, `resps` `[[text]]`, `filtered_resps` `[text]`,
  `doc_hash`, `prompt_hash`, `target_hash`, the metric fields, `input`;
- "0.4" (v0.4 to v0.6): no `doc`, no `arguments`; `resps` only when it differs from
  `filtered_resps` (`[text]`);
- "0.7" (v0.7 on): one-element lists flattened (`filtered_resps` is the text), and
  `token_counts`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

SALBENCH_SUFFIX = "\nAnswer the question using a single word or phrase."


def _hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def line(version: str, doc_id: int, target: str, response: str, prompt: str,
         metrics: dict[str, Any], *, doc: dict[str, Any] | None = None,
         filtered: str | None = None, tokens: dict[str, int] | None = None) -> dict[str, Any]:
    """One logged sample. `response` is the model's text; `filtered` what lmms-eval's filter
    made of it (default: the same)."""
    filtered = response if filtered is None else filtered
    out: dict[str, Any] = {"doc_id": doc_id}
    if version == "0.3":
        kept = {k: v for k, v in (doc or {}).items() if "image" not in k}
        out |= {"doc": kept, "target": str(target), "arguments": {"0": "max_new_tokens"},
                "resps": [[response]], "filtered_resps": [filtered],
                "doc_hash": _hash(doc), "prompt_hash": _hash(prompt),
                "target_hash": _hash(str(target))}
    elif version == "0.4":
        out["target"] = str(target)
        if response != filtered:
            out["resps"] = [[response]]
        out |= {"filtered_resps": [filtered], "doc_hash": _hash(doc)}
    else:
        out["target"] = str(target)
        if response != filtered:
            out["resps"] = response
        out |= {"filtered_resps": filtered, "token_counts": [tokens], "doc_hash": _hash(doc)}
    return out | metrics | {"input": prompt}


def write(path: Path, lines: list[dict[str, Any] | str]) -> Path:
    """A samples file: objects as JSON lines, strings verbatim (malformed lines)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for item in lines:
            text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
            fh.write(text + "\n")
    return path


def salbench_metrics(image_id: str, filtered: str, answer: str,
                     classes: tuple[str, ...]) -> dict[str, Any]:
    """The metric fields lmms-eval's salbench `process_results` logs for one sample,
    computed by its rule (exact match of the comma-split sets)."""
    pred = {x.strip() for x in filtered.lower().strip("[").strip("]").split(",")}
    gold = {x.strip() for x in answer.lower().split(",")}
    cats = {c: {"true_pos": int(c in pred and c in gold), "false_pos": int(c in pred and
                                                                          c not in gold),
                "true_neg": int(c not in pred and c not in gold),
                "false_neg": int(c not in pred and c in gold)} for c in classes}
    matches = len(pred & gold)
    precision = matches / (len(pred) + 1e-8)
    recall = matches / len(gold)
    out: dict[str, Any] = {
        "exact_match": {"score": int(pred == gold)},
        "sample_precision": {"score": precision}, "sample_recall": {"score": recall},
        "sample_f1": {"score": 2 * precision * recall / (precision + recall + 1e-8)},
    }
    for name in ("all_cat_precision", "all_cat_recall", "all_cat_f1"):
        out[name] = {"id": image_id, "pred": cats}
    for c in classes:
        for m in ("precision", "recall", "f1"):
            out[f"{c}_{m}"] = {"pred": cats[c]}
    return out


def results_file(folder: Path, date_id: str, tasks: dict[str, dict[str, Any]],
                 model_name: str = "Qwen/Qwen2-VL-7B-Instruct") -> Path:
    """`<date_id>_results.json` as lmms-eval writes it beside the samples (the keys the
    rescore reads, plus a model_args that must not be copied)."""
    data = {
        "results": {t: {"alias": t} for t in tasks},
        "configs": {t: {"task": t, **cfg} for t, cfg in tasks.items()},
        "n-samples": {t: cfg.pop("_n", {"original": 10, "effective": 10})
                      for t, cfg in tasks.items()},
        "config": {"model": "qwen2_vl", "model_args": "pretrained=x,api_key=SECRET"},
        "git_hash": "75571cfe", "lmms_eval_version": "main@75571cfe",
        "date": date_id, "model_name": model_name,
        "model_name_sanitized": model_name.replace("/", "__"),
    }
    path = folder / f"{date_id}_results.json"
    path.write_text(json.dumps(data, indent=2))
    return path
