"""Where a resumed run may send its images and which key goes with them.

A run directory can come from anywhere (a colleague's folder, a download), and its run.json
is a file anyone may have written. So a resume takes from it only what cannot leak: a hosted
API (api.openai.com, api.anthropic.com, openrouter.ai) with that host's own key variable.
Any other server, a URL that held credentials, and any key variable named with
`--api-key-env` must be named again on the resume's command line: a key goes to a host only
when the command line names both, never because a file says so.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from visioneval.backends.keys import MASK, MODEL_FLAGS, TargetFlags, redact_url
from visioneval.backends.registry import BackendSpec
from visioneval.backends.served import hosted_host
from visioneval.core import registry
from visioneval.core.backend_spec import LOCAL_KINDS
from visioneval.core.runfiles import BackendInfo, RunInfo
from visioneval.invocation import command


def resumed_spec(stored: BackendInfo, given_urls: Sequence[str], given_key_env: str | None,
                 flags: TargetFlags = MODEL_FLAGS) -> BackendSpec:
    """The backend a resume talks to: the recorded one, with the URLs and key variable this
    command line gives; a ValueError naming the flags to give when the record alone may
    not be trusted (see the module's docstring)."""
    kind, model = stored.kind, stored.model
    if kind in LOCAL_KINDS:  # a person's page: where this command line serves it
        return BackendSpec.model_validate({"kind": kind, "model": model, "base_urls": tuple(
            given_urls) if kind == "human" else ()})
    urls = _matched(stored.urls(), given_urls, flags)
    key_env = given_key_env
    untrusted = [u for u, given in urls if not given and (MASK in u or hosted_host(u) is None)]
    needs_key = stored.api_key_env and given_key_env is None
    ungiven_with_key = [u for u, given in urls if not given] if given_key_env else []
    if untrusted or needs_key or ungiven_with_key:
        raise ValueError(untrusted_line(stored, flags))
    return BackendSpec.model_validate({"kind": kind, "model": model,
                                       "base_urls": tuple(u for u, _ in urls),
                                       "api_key_env": key_env})


def untrusted_line(stored: BackendInfo, flags: TargetFlags = MODEL_FLAGS) -> str:
    """Why a resume needs the server named again, and the flags to add."""
    return (f"resuming sends this run's images{' and a key' if stored.api_key_env else ''}"
            f" to its server, and run.json alone is not trusted to name one; name it again "
            f"on the command line: {again_flags(stored, flags)}")


def again_flags(stored: BackendInfo, flags: TargetFlags = MODEL_FLAGS) -> str:
    """The flags a resume of this backend needs on its command line ('' when none): every
    URL that is not a hosted API's (or held credentials, shown masked), and the key
    variable the run used if the user named one."""
    if stored.kind in (*LOCAL_KINDS, "rescored"):
        return ""
    urls = stored.urls()
    key_env = stored.api_key_env
    needed = key_env or any(MASK in u or hosted_host(u) is None for u in urls)
    if not needed:
        return ""
    parts = [f"{flags.url} {shlex.quote(u)}" for u in urls]
    if key_env:
        parts.append(f"{flags.key} {shlex.quote(key_env)}")
    return " ".join(parts)


def _matched(recorded: list[str], given: Sequence[str], flags: TargetFlags
             ) -> list[tuple[str, bool]]:
    """Each recorded URL, replaced by the one given again for it (a given URL must be one
    of the run's servers: it equals a recorded URL once its credentials are masked), and
    whether it was given."""
    if not recorded:
        return [(url, True) for url in given]
    urls = [(url, False) for url in recorded]
    for url in given:
        safe = redact_url(url.rstrip("/"))
        if safe not in recorded:
            raise ValueError(f"{flags.url} {redact_url(url)} does not match the run's "
                             f"{' or '.join(recorded)}; a resume continues with the same "
                             f"server{'s' if len(recorded) > 1 else ''}")
        urls[recorded.index(safe)] = (url, True)
    return urls


def resume_command(info: RunInfo | str, directory: Any) -> str:
    """The command that continues a run, spelled as this process was started (`uv run
    visioneval ...`, `python -m visioneval ...`) so it works when pasted: its benchmark's
    (or `run` with the user's own definition), with the flags run.json alone may not supply
    (the server, the key variable). `info` is the run's run.json, or only its benchmark's
    name when it has none yet."""
    if isinstance(info, str):
        return command(info, "--resume", directory)
    words = ["run", info.definition] if info.definition else [info.benchmark]
    line = command(*words, "--resume", directory)
    more = again_flags(info.backend, target_flags(info.benchmark))
    return f"{line} {more}" if more else line


def target_flags(benchmark: Any) -> TargetFlags:
    """The flags naming the run's model server on its benchmark's command (evaluate's model
    is its judge: --judge-base-url); looked up among registered benchmarks only."""
    if isinstance(benchmark, str) and benchmark in registry.names():
        url, key = registry.definition(benchmark).target_flags
        return TargetFlags(url, key)
    return MODEL_FLAGS


def judge_flags(benchmark: Any) -> TargetFlags:
    """The flags naming the judge's server on the benchmark's command (vqa's
    --judge-base-url, --judge-api-key-env): its definition's `judge_target` options;
    looked up among registered benchmarks only."""
    if isinstance(benchmark, str) and benchmark in registry.names():
        return judge_flags_of(registry.definition(benchmark).judge_target)
    return judge_flags_of(None)


def judge_flags_of(judge_target: tuple[str, str] | None) -> TargetFlags:
    """A definition's `judge_target` (option names) as the flags its command has."""
    if judge_target is None:
        return TargetFlags("--judge-base-url", "--judge-api-key-env")
    url, key = judge_target
    return TargetFlags("--" + url.replace("_", "-"), "--" + key.replace("_", "-"))
