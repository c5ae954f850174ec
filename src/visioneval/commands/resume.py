"""`--resume RUN_DIR` as a command: continue a run with what it recorded, taking from the
command line only what a file may not decide (see `visioneval.runs.target`) and what the
user changes on purpose (`visioneval.runs.resume`).

What run.json recorded: the benchmark and its options, the model, the generation settings
and every engine setting (concurrency, retries, timeouts, rate limits, the cache). Engine
flags given again replace their recorded value, each said in one line and recorded in the
session. Flags that would change what is measured (the model, a benchmark option, the
generation settings) are refused, never silently dropped: that is a new run.
"""

from __future__ import annotations

from visioneval.commands.run import _execute
from visioneval.core.store import RunLock, RunStore
from visioneval.runs.execute import Continuing, execute
from visioneval.runs.output import Output
from visioneval.runs.request import ResumeRequest
from visioneval.runs.resume import check_resumable_kind, continuation
from visioneval.terminal import line


def resume(request: ResumeRequest, output: Output) -> int:
    """Continue the run in `request.directory` in this process."""
    directory = request.directory
    info = RunStore.open(directory).info
    check_resumable_kind(info, directory, request.expected)
    with RunLock(directory) as lock:  # before anything is read for the session
        info = RunStore.open(directory).info
        again = continuation(info, request.given, directory)
        spec = again.spec
        line(output.err, f"resuming {directory}: {spec.backend.kind} {spec.backend.model}"
                         + (f", shard {spec.shard.label}" if spec.shard else ""))
        for change in again.changes:
            line(output.err, f"  {change.line()}")
        return _execute(execute(spec, directory, output, lock, Continuing(
            again.changes, request.given.stopping)), spec.build(), directory, output)
