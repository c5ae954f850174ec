"""A run read from a file to be run again (`visioneval run --spec FILE`): a RunSpec written
as JSON (`RunSpec.to_json`), or a finished run's run.json (`RunSpec.from_run`).

A file can come from anyone, so it is read as a run directory is (`visioneval.runs.target`):
it never makes visioneval import code the command line did not name, and it never sends a
key anywhere the command line did not name: a server other than a hosted API's own, or a
key variable, is given again with --base-url and --api-key-env. Options that grant trust
(running a case's script, reading images outside its folder) are off unless given again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from visioneval.backends.registry import recorded
from visioneval.core import registry
from visioneval.core.runfiles import BackendInfo, RunFileError, run_info_from
from visioneval.invocation import command
from visioneval.runs.spec import RunSpec, SpecError
from visioneval.runs.target import resumed_spec, target_flags


def read_spec(path: Path, *, base_urls: Sequence[str] = (), api_key_env: str | None = None,
              named: str | None = None, options: Mapping[str, Any] | None = None) -> RunSpec:
    """The run `path` describes, with the servers, key variable, definition and trusted
    options this command line gives; a ValueError of one line naming the file otherwise."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"--spec {path}: {exc.strerror or exc}") from None
    spec, stored = _parse(raw, path)
    if spec.definition is not None and (
            named is None or registry.portable(named) != spec.definition):
        again = command("run", spec.definition, "--spec", path)
        raise ValueError(f"{path} runs code of your own ({spec.definition}); a file alone "
                         f"never makes visioneval import code, so name it again: {again}")
    backend = resumed_spec(stored, base_urls, api_key_env, target_flags(spec.benchmark))
    given = dict(options or {})
    definition = spec.definition_object()
    if other := sorted(set(given) - set(definition.trust_options)):
        trust = ", ".join(definition.trust_options)
        raise ValueError(f"--option {other[0]}: the --spec file holds the options; change it "
                         "there" + (f" (given again: only {trust})" if trust else ""))
    trusted = {name: bool(given.get(name, False)) for name in definition.trust_options
               if name in spec.options}
    return spec.given(backend=backend, options=dict(spec.options) | trusted)


def _parse(raw: bytes, path: Path) -> tuple[RunSpec, BackendInfo]:
    """(the RunSpec, its model as run.json records one) from either kind of file."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"--spec {path}: not valid JSON ({exc})") from None
    try:
        if isinstance(data, dict) and "run_format" in data:
            info, _ = run_info_from(data)
            if info.backend.kind == "rescored":
                raise ValueError(f"--spec {path}: a run re-scored from another tool's log "
                                 "asked no model, so there is nothing to run again")
            return RunSpec.from_run(info), info.backend
        spec = RunSpec.from_data(data, f"--spec {path}")
    except RunFileError as exc:
        raise ValueError(f"--spec {path}: {exc}") from None
    except SpecError as exc:
        text = str(exc)
        raise ValueError(text if text.startswith("--spec") else f"--spec {path}: {text}"
                         ) from None
    return spec, BackendInfo.model_validate(recorded(spec.backend))
