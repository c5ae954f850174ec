"""The one step from a request to its command: a new run or a resume, in this process or
as shards on Ray, or only its estimate (`--dry-run`)."""

from __future__ import annotations

from visioneval.runs.output import Output
from visioneval.runs.request import ResumeRequest, RunRequest


def perform(request: RunRequest | ResumeRequest, output: Output, dry_run: bool = False) -> int:
    """Carry out `request` and print as the commands do; the exit code. `dry_run`: only
    what it would send and cost (--executor ray changes where a run goes, not what it
    sends)."""
    if dry_run:
        from visioneval.commands import dryrun

        if isinstance(request, ResumeRequest):
            return dryrun.dry_run_resume(request, output)
        return dryrun.dry_run(request, output)
    if isinstance(request, ResumeRequest):
        if request.ray is not None:
            from visioneval.distributed.ray_runner import resume as resume_on_ray

            return resume_on_ray(request, output)
        from visioneval.commands.resume import resume

        return resume(request, output)
    if request.ray is not None:
        from visioneval.distributed.ray_runner import run as run_on_ray

        return run_on_ray(request, output)
    from visioneval.commands.run import run

    return run(request, output)
