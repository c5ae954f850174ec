"""How each protocol reads one answer, as pure functions of (task, answer text); whether the
reading is right against the Hub's `groundtruth`.

- paper: the paper's repository has no answer-parsing code ([P] holds the generation
  notebooks and `src/prompts.md` only), so visioneval reads each answer in the format the
  paper's prompts ask for, after dropping a reasoning model's `<think>...</think>` block:
  a number in curly brackets ("{3}"), else the whole answer being one number ("3."); a letter
  in curly brackets or quotes, else the whole answer being one letter; the first "yes" or
  "no" word; rows={r} columns={c}, "(r, c)" or "{r} {c}" for the grids. Anything else is
  unparsed (counted, and wrong). Letters and yes/no compare case-insensitively.
- lmms-eval ([L] utils.py `parse_response`, lines 42-75; `vlmsareblind_process_results`,
  lines 78-93): the answer stripped and lowercased; touching circles must *be* "yes" or
  "no" (line 51); counts take the first run of digits anywhere (line 55, the braces are
  optional); the circled letter is the first letter a-z anywhere (line 60: "The letter is
  {e}" reads "t"); grids `{r}{c}`, then `(r, c)`, then `rows={r} columns={c}` with exactly
  one whitespace between (lines 65-73). Compared with the lowercased label (line 91).
- vlmevalkit ([V] image_mcq.py `VLMBlind.evaluate`, lines 2570-2609): subway, nested
  squares, line intersections and the circled letter: the text of the first `{...}` equals
  the label exactly, case-sensitive (lines 2538-2545, 2579-2590, 2606-2609; no braces:
  wrong); touching circles: the label lowercased is a *substring* of the answer lowercased
  (line 2592: "No" is found in "not", "cannot", "know"); Olympic counts: the label is a
  substring of the answer (lines 2600-2605: "1" is found in "10" and "{12}"); grids:
  `Rows ... {r}` and `Columns ... {c}`, else `(r, c)`; the two numbers equal the label's
  (lines 2547-2568).
"""

from __future__ import annotations

import re

from visioneval.benchmarks.blindtest.spec import (
    CIRCLED,
    GRID_TASKS,
    LMMS,
    NUMBER_TASKS,
    OLYMPIC_CIRCLES,
    OLYMPIC_PENTAGONS,
    PAPER,
    TOUCHING,
)

UNPARSED = ""  # a reading that found nothing (scored wrong, counted as unparsed)

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_BRACED_NUMBER = re.compile(r"\{\s*(\d+)\s*\}")
_BRACED_LETTER = re.compile(r"\{\s*([A-Za-z])\s*\}")
_QUOTED_LETTER = re.compile(r"[\"'\u2018\u201c]([A-Za-z])[\"'\u2019\u201d]")
_YES_NO = re.compile(r"\b(yes|no)\b", re.I)
_GRID_NAMED = re.compile(r"rows?\s*[=:]\s*\{?\s*(\d+)\s*\}?[\s,;]*(?:and\s+)?"
                         r"columns?\s*[=:]\s*\{?\s*(\d+)\s*\}?", re.I)
_GRID_PAIR = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_GRID_BRACES = re.compile(r"\{\s*(\d+)\s*\}\s*,?\s*\{\s*(\d+)\s*\}")
_TRAILING = " \t\n.!:;*`\"'"


def without_thinking(text: str) -> str:
    """The answer after a reasoning model's `<think>...</think>` block (an unclosed block
    leaves nothing)."""
    text = _THINK.sub(" ", text)
    if "<think>" in text.lower():
        return ""
    return text.strip()


def normal_label(task: str, label: str) -> str:
    """The Hub's label as the paper's reading compares it: "r,c" without spaces for grids,
    lowercase for letters and yes/no."""
    label = label.strip()
    if task in GRID_TASKS:
        return ",".join(p.strip() for p in label.split(","))
    return label.lower() if task in (CIRCLED, TOUCHING) else label


def paper_reading(task: str, text: str) -> str:
    """The answer in the format the paper's prompts ask for, or UNPARSED."""
    text = without_thinking(text)
    bare = text.strip(_TRAILING)
    if task == TOUCHING:
        found = _YES_NO.search(text)
        return found.group(1).lower() if found else UNPARSED
    if task in NUMBER_TASKS:
        braced = _BRACED_NUMBER.search(text)
        if braced:
            return str(int(braced.group(1)))
        return str(int(bare)) if bare.isdigit() else UNPARSED
    if task == CIRCLED:
        found = _BRACED_LETTER.search(text) or _QUOTED_LETTER.search(text)
        if found:
            return found.group(1).lower()
        return bare.lower() if len(bare) == 1 and bare.isalpha() else UNPARSED
    if task in GRID_TASKS:
        for pattern in (_GRID_NAMED, _GRID_PAIR, _GRID_BRACES):
            found = pattern.search(text)
            if found:
                return f"{int(found.group(1))},{int(found.group(2))}"
        return UNPARSED
    return bare


_LMMS_NUMBER = re.compile(r"\{?(\d+)\}?")
_LMMS_LETTER = re.compile(r"\{?([a-z])\}?")
_LMMS_GRID = (re.compile(r"\{(\d+)\}\s*\{(\d+)\}"), re.compile(r"\((\d+)\s*,\s*(\d+)\)"),
              re.compile(r"rows=\{(\d+)\}\scolumns=\{(\d+)\}"))


def lmms_reading(task: str, text: str) -> str:
    """lmms-eval's `parse_response` ([L] utils.py lines 42-75), UNPARSED for its None."""
    response = text.strip().lower()
    if task == TOUCHING:
        return response if response in ("yes", "no") else UNPARSED
    if task in NUMBER_TASKS:
        found = _LMMS_NUMBER.search(response)
        return found.group(1) if found else UNPARSED
    if task == CIRCLED:
        found = _LMMS_LETTER.search(response)
        return found.group(1) if found else UNPARSED
    if task in GRID_TASKS:
        for pattern in _LMMS_GRID:
            match = pattern.search(response)
            if match:
                return f"{match.group(1)},{match.group(2)}"
    return UNPARSED


_VLM_BRACES = re.compile(r"\{(.*?)\}")
_VLM_ROWS = re.compile(r"[Rr]ows?(?:[^{}]*)\{(\d+)\}")
_VLM_COLUMNS = re.compile(r"[Cc]olumns?(?:[^{}]*)\{(\d+)\}")
_VLM_PAIR = re.compile(r"\((\d+),\s*(\d+)\)")


def vlmevalkit_reading(task: str, text: str) -> str:
    """What VLMEvalKit compares with the label: the first braces' text for the tasks it
    reads so ([V] `extract_content_in_braces`, lines 2538-2545), the grid's "r,c" (lines
    2556-2568), the answer itself for the substring tasks (touching circles, Olympic)."""
    if task in GRID_TASKS:
        rows, columns = _VLM_ROWS.search(text), _VLM_COLUMNS.search(text)
        if rows and columns:
            return f"{int(rows.group(1))},{int(columns.group(1))}"
        pair = _VLM_PAIR.search(text)
        return f"{int(pair.group(1))},{int(pair.group(2))}" if pair else UNPARSED
    if task in (TOUCHING, OLYMPIC_CIRCLES, OLYMPIC_PENTAGONS):
        return text
    found = _VLM_BRACES.search(text)
    return found.group(1) if found else UNPARSED


def _grid_label(label: str) -> tuple[int, ...] | None:
    """The label's two numbers as VLMEvalKit reads them ([V] lines 2548-2554), else None."""
    try:
        found = tuple(int(x.strip()) for x in label.split(","))
    except ValueError:
        return None
    return found if len(found) == 2 else None


def correct(protocol: str, task: str, reading: str, label: str) -> bool:
    """Whether the protocol scores its reading right against the Hub's label."""
    if protocol == PAPER:
        return reading != UNPARSED and reading == normal_label(task, label)
    if protocol == LMMS:
        # [L] utils.py lines 84-91: None is wrong, else equal to the label lowercased.
        return reading != UNPARSED and reading.strip().lower() == label.strip().lower()
    if task in GRID_TASKS:
        wanted = _grid_label(label)
        return reading != UNPARSED and wanted is not None and \
            tuple(int(x) for x in reading.split(",")) == wanted
    if task == TOUCHING:
        return label.lower() in reading.lower()  # [V] line 2592, substring
    if task in (OLYMPIC_CIRCLES, OLYMPIC_PENTAGONS):
        return label in reading  # [V] lines 2601, 2604, substring
    return reading == label  # [V] exact, case-sensitive; "" never equals a label


def unparsed(protocol: str, task: str, reading: str) -> bool:
    """Whether the protocol could not read the answer at all (VLMEvalKit's substring tasks
    always read it: a missing label is just wrong)."""
    if protocol == "vlmevalkit" and task in (TOUCHING, OLYMPIC_CIRCLES, OLYMPIC_PENTAGONS):
        return False
    return reading == UNPARSED


def read(protocol: str, task: str, text: str) -> str:
    if protocol == PAPER:
        return paper_reading(task, text)
    if protocol == LMMS:
        return lmms_reading(task, text)
    return vlmevalkit_reading(task, text)
