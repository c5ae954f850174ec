"""The one step from a request to its command: a new run or a resume, in this process or
as shards on Ray, or only its estimate (`--dry-run`); and the flow of every run command
around it (`run_flags`: logging, the request from the flags, this step, the exit code)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from visioneval.commands import dryrun
from visioneval.commands.common import consoles, guarded
from visioneval.commands.flags import Ready, request_from
from visioneval.commands.merge import merge_and_report
from visioneval.commands.resume import resume
from visioneval.commands.run import run
from visioneval.distributed import ray_runner
from visioneval.runs.output import Output
from visioneval.runs.request import ResumeRequest
from visioneval.runs.spec import RunSpec
from visioneval.terminal import setup_logging

if TYPE_CHECKING:
    from visioneval.commands.flags import RunFlags, RunTarget


def perform(request: RunSpec | ResumeRequest, output: Output, dry_run: bool = False) -> int:
    """Carry out `request` and print as the commands do; the exit code. `dry_run`: only
    what it would send and cost (--executor ray changes where a run goes, not what it
    sends)."""
    if dry_run:
        if isinstance(request, ResumeRequest):
            return dryrun.dry_run_resume(request, output)
        return dryrun.dry_run(request, output)
    if isinstance(request, ResumeRequest) and request.ray is None:
        return resume(request, output)
    if isinstance(request, RunSpec) and not request.on_ray:
        return run(request, output)
    # On Ray: the shards run there, and end merged as `visioneval merge` says it.
    merged = partial(merge_and_report, allow_partial=False, output=output, replace=True)
    if isinstance(request, ResumeRequest):
        return ray_runner.resume(request, output, merged)
    return ray_runner.run(request, output, merged)


def run_flags(flags: RunFlags, target: RunTarget | Callable[[], Ready]) -> int:
    """The flow of every run command: logging, the request built from the flags (a bad
    flag is one line with exit 2), then the run, the resume or (--dry-run) the estimate;
    its exit code. `target` may be made here (`Ready`), after `flags` set the logging and
    the output."""
    console, err = consoles()
    setup_logging(err, flags.verbose)
    output = Output(console, err, progress=not flags.no_progress, report=not flags.no_report,
                    early_thumbnails=not flags.no_report)

    def action() -> int:
        ready = target() if callable(target) else Ready(flags, target)
        code = perform(request_from(ready.flags, ready.target), output, ready.flags.dry_run)
        return ready.then(code, output) if ready.then is not None else code

    return guarded(err, action)
