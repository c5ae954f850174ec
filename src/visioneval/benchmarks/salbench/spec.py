"""SalBench's fixed facts (arXiv 2507.04741; HF salbench-vlm/salbench; lmms-eval task by the
paper's author). See docs/salbench.md for sources."""

from __future__ import annotations

from dataclasses import dataclass

HF_REPO = "salbench-vlm/salbench"
SPLIT = "test"

# Class vocabularies in the order the prompts list them (authors' figures; lmms-eval utils).
P3_CLASSES = ("orientation", "color", "size")
O3_CLASSES = ("orientation", "color", "focus", "shape", "size", "location", "pattern")

TASKS = {"D": "Detection", "R": "Referring", "VR": "Visual Referring"}
TASK_SUFFIX = {"D": "", "R": "_box", "VR": "_box_img"}
SPLITS = {"synthetic": "P3", "natural": "O3"}

# The lmms-eval task appends this to every question (p3o3_doc_to_text).
LMMS_EVAL_SUFFIX = "\nAnswer the question using a single word or phrase."


@dataclass(frozen=True)
class ConfigSpec:
    """One HF config: which image set, which task, which classes."""

    name: str
    dataset: str  # "P3" (synthetic) or "O3" (natural)
    task: str  # "D", "R" or "VR"

    @property
    def classes(self) -> tuple[str, ...]:
        return P3_CLASSES if self.dataset == "P3" else O3_CLASSES

    @property
    def split_name(self) -> str:
        return "synthetic" if self.dataset == "P3" else "natural"


CONFIGS = {
    f"{ds}{suffix}": ConfigSpec(f"{ds}{suffix}", ds, task)
    for ds in ("P3", "O3") for task, suffix in TASK_SUFFIX.items()
}


def select_configs(configs: list[str] | None, splits: list[str] | None,
                   tasks: list[str] | None) -> list[ConfigSpec]:
    """Configs named directly, else the product of --splits and --tasks."""
    if configs:
        unknown = [c for c in configs if c not in CONFIGS]
        if unknown:
            raise ValueError(f"unknown config(s) {', '.join(unknown)}; "
                             f"choose from {', '.join(CONFIGS)}")
        return [CONFIGS[c] for c in configs]
    splits = splits or list(SPLITS)
    tasks = tasks or list(TASKS)
    bad = [s for s in splits if s not in SPLITS] + [t for t in tasks if t not in TASKS]
    if bad:
        raise ValueError(f"unknown split or task {', '.join(bad)}; splits are "
                         f"{', '.join(SPLITS)}, tasks are {', '.join(TASKS)}")
    return [CONFIGS[SPLITS[s] + TASK_SUFFIX[t]] for s in splits for t in tasks]
