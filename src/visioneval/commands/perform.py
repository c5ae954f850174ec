"""The one step from a request to its command: a new run or a resume, in this process or
as shards on Ray, or only its estimate (`--dry-run`)."""

from __future__ import annotations

from functools import partial

from visioneval.commands import dryrun
from visioneval.commands.merged import merge_and_report
from visioneval.commands.resume import resume
from visioneval.commands.run import run
from visioneval.distributed import ray_runner
from visioneval.runs.output import Output
from visioneval.runs.request import ResumeRequest
from visioneval.runs.spec import RunSpec


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
