"""Worker pools for CPU-bound work beside the event loop (the popout baseline, layout
metrics, psychophysics stimuli), safe whoever called visioneval.

A process pool's workers import the script that started Python again (`__main__`, under the
name `__mp_main__`) before they run anything. That is harmless for the `visioneval` command,
`python -m ...`, an interactive session or a notebook, and a script whose call stands under
`if __name__ == "__main__":`; a script without that guard would run itself again in every
worker (a second run on the same folder, and a broken pool). So a process pool is used only
where the re-import is harmless, and threads otherwise: the same results, fewer cores."""

from __future__ import annotations

import ast
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from functools import lru_cache
from multiprocessing import get_context
from pathlib import Path
from types import FrameType
from typing import Any


def pool(workers: int, name: str, initializer: Callable[..., Any] | None = None,
         initargs: tuple[Any, ...] = ()) -> Executor:
    """`workers` processes (started by a fork server) where the caller's script may be
    imported again, else `workers` threads (`name` names them; no initializer: it sets up a
    worker process)."""
    if workers > 1 and processes_are_safe():
        return ProcessPoolExecutor(workers, mp_context=get_context("forkserver"),
                                   initializer=initializer, initargs=initargs)
    return ThreadPoolExecutor(workers, thread_name_prefix=name)


def processes_are_safe() -> bool:
    """Whether a worker process may import `__main__` again: it has no file (a notebook, an
    interactive session, `python -c`), it is a package's `__main__` (which multiprocessing
    does not import again), or the main thread is inside its `if __name__ == "__main__":`."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None:
        return True
    spec = getattr(main, "__spec__", None)
    if spec is not None and (spec.name == "__main__" or spec.name.endswith(".__main__")):
        return True
    line = _main_line(main.__dict__)
    return line is not None and any(start <= line <= end for start, end in _guards(path))


def _main_line(namespace: dict[str, Any]) -> int | None:
    """The line the main thread's top-level code of `__main__` is at (None: not running)."""
    frame: FrameType | None = sys._current_frames().get(threading.main_thread().ident or 0)
    found = None
    while frame is not None:
        if frame.f_globals is namespace and frame.f_code.co_name == "<module>":
            found = frame.f_lineno
        frame = frame.f_back
    return found


@lru_cache(maxsize=8)
def _guards(path: str) -> tuple[tuple[int, int], ...]:
    """The line spans of a script's top-level `if __name__ == "__main__":` blocks (none when
    it cannot be read)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return ()
    return tuple((node.lineno, node.end_lineno or node.lineno) for node in tree.body
                 if isinstance(node, ast.If) and _is_main_test(node.test))


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    named = any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
    main = any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)
    return named and main

