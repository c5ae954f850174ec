"""Known edits of a candidate answer, for checking that a rubric judge notices them.

A judge that reads the image should score an answer lower when one of its counts is made
wrong, an absent object is claimed, an element it mentioned is left out or a colour is
changed, and it should name that edit in the verdict's detail lists (`hallucinations`,
`missing_elements`). The edits are rules, not a model: the same output always gets the same
edit (a choice between equal candidates is seeded by a hash of the output), so a rerun asks
the judge, and its cache, the same question. An edit prefers a part of the answer the
reference answer confirms, so a right statement is made wrong rather than a wrong one
changed. An answer that is one JSON value (a structured answer, fenced or not) is edited in
its values and stays JSON.

The modules: `edit` (the Edit, make_edit, named), one per rule (`counts`, `objects`,
`missing`, `colours`: each on prose and on a JSON answer's values), `structured` (reading
and writing back a JSON answer), `words` (plural, case, content words, seeded choices) and
`vocabulary` (the word lists).
"""

from __future__ import annotations

from visioneval.evaluators.edits.edit import DETAIL, KINDS, Edit, EditKind, make_edit, named
from visioneval.evaluators.edits.vocabulary import COLOURS, OBJECTS

__all__ = ["COLOURS", "DETAIL", "KINDS", "OBJECTS", "Edit", "EditKind", "make_edit", "named"]
