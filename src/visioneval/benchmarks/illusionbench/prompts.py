"""The two prompt families, verbatim.

`original`: [R] Zero-shot_experiments/Evaluator.py (`icon_prompts`, `logo_prompts`,
`sin_prompts`). Single-line strings; the options are the shape classes, then the simple
scenes, then the complex scenes, each list joined with ", ", the shape list glued to the
scenes by a bare "," and no space after "options:", exactly as the original writes them.
The shape prompt has no period after the options; the scene prompt has one. Each subset words
the shape prompt differently (ICON "the icon", LOGO "the logo ... forming the logo", IN "the
shape ... represents the icon").

`lmms`: the lmms-eval strict variant ([L5917] `_build_shape_prompt`/`_build_scene_prompt`):
lowercase shape candidates only for the shape task, the 11 scenes (its own order) for the
scene task, and an "Answer: <your choice>" format.

The original inserted its prompt into a per-model template (`USER: <image>\n...`); chat
servers apply their own template, so we send the image, then the prompt text.
"""

from __future__ import annotations

from visioneval.benchmarks.illusionbench.spec import (
    COMPLEX_SCENES,
    LMMS_SCENES,
    LMMS_SHAPES,
    ORIGINAL_SHAPES,
    SIMPLE_SCENES,
)

_SHAPE = ("This image contains a icon integrated into a background, where elements of the "
          "background contribute to forming the {forming}. Identify the {target} that is "
          "represented in the image by choosing exclusively among the following options:"
          "{options} Provide your response by stating only the single, most accurate class "
          "name that represents the {represents}. You have to respond with a single word.")
_SCENE = ("This image contains an icon integrated into a background, where elements of the "
          "background contribute to forming the {forming}. Identify the background that is "
          "represented in the image by choosing exclusively among the following options:"
          "{options}. Provide your response by stating only the single, most accurate class "
          "name that represents the background. You have to respond with a single word.")
# (forming, target, represents) per subset for the shape prompt; the scene prompt uses
# `forming` only ([R] Evaluator.py).
_WORDS = {"ICON": ("icon", "icon", "icon"), "LOGO": ("logo", "logo", "logo"),
          "IN": ("icon", "shape", "icon")}

_LMMS_SHAPE = ("You are given an image where scene elements form an abstract SHAPE.\n"
               "Task: Identify what shape is hidden in this image.\n\n"
               "Options: [{options}]\n\nReply in this exact format:\nAnswer: <your choice>\n")
_LMMS_SCENE = ("You are given an image depicting a SCENE.\n"
               "Task: Identify what scene is shown in this image.\n\n"
               "Options: [{options}]\n\nReply in this exact format:\nAnswer: <your choice>\n")


def original_options(subset: str) -> str:
    """`{shape_string},{simple_string}, {complex_string}` as the original joins them."""
    return (", ".join(ORIGINAL_SHAPES[subset]) + "," + ", ".join(SIMPLE_SCENES) + ", "
            + ", ".join(COMPLEX_SCENES))


def original_prompt(subset: str, task: str) -> str:
    forming, target, represents = _WORDS[subset]
    if task == "shape":
        return _SHAPE.format(forming=forming, target=target, represents=represents,
                             options=original_options(subset))
    return _SCENE.format(forming=forming, options=original_options(subset))


def lmms_prompt(subset: str, task: str) -> str:
    if task == "shape":
        return _LMMS_SHAPE.format(options=", ".join(LMMS_SHAPES[subset]))
    return _LMMS_SCENE.format(options=", ".join(LMMS_SCENES))


def prompt(family: str, subset: str, task: str) -> str:
    return original_prompt(subset, task) if family == "original" else lmms_prompt(subset, task)


def offered(family: str, subset: str, task: str) -> tuple[str, ...]:
    """The answers a prompt lists (the original lists shapes and scenes in both prompts)."""
    if family == "original":
        return ORIGINAL_SHAPES[subset] + SIMPLE_SCENES + COMPLEX_SCENES
    return LMMS_SHAPES[subset] if task == "shape" else LMMS_SCENES
