"""`visioneval layout`: CANVAS's layout-generation metrics as a run of the `layout` benchmark
on the engine (run directory, journal, resume, shards, Ray, report), with CANVAS's flags.

`run_layout` is what the CLI calls; `LayoutArgs` holds the options without typer."""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from visioneval.terminal import line

if TYPE_CHECKING:
    from visioneval.commands.flags import RunFlags
    from visioneval.core.benchmark import Benchmark
    from visioneval.distributed.options import Distribution
    from visioneval.runs.output import Output

log = logging.getLogger("visioneval.layout")

# The flags a resume refuses: it continues with what the run recorded.
FIXED = ("--base-dir", "--model", "--variant", "--ids", "--workers", "--viz",
         "--skip-semantic", "--semantic-from", "--caption-backend", "--caption-model",
         "--caption-prompt", "--embedder", "--out")


@dataclass
class LayoutArgs:
    base_dir: Path | None
    model: str = "gpt-4o"
    variant: str = "image_only"  # one variant, or several separated by commas
    out: Path | None = None  # the run directory (FILE.json: the folder FILE)
    ids: list[str] | None = None
    skip_semantic: bool = False
    semantic_from: Path | None = None  # default with --skip-semantic: an existing --out FILE.json
    viz: bool = False
    workers: int | None = None  # default: cpu count
    caption_backend: str | None = None
    caption_model: str | None = None
    caption_base_url: str | None = None
    caption_api_key_env: str | None = None
    caption_prompt: str | None = None
    embedder: str = "minilm"
    progress: bool = True
    report: bool = True
    no_cache: bool = False
    resume: Path | None = None
    shard: str | None = None  # --shard K/N
    executor: str = "local"
    shards: int | None = None
    ray_address: str | None = None
    given: tuple[str, ...] = ()  # the FIXED flags given (refused with --resume)

    def flags(self) -> RunFlags:
        """The flags every run command shares, as layout's command line gave them."""
        from visioneval.commands.flags import RunFlags

        new = self.resume is None  # a resume's model is the run's (--model: `given`)
        return RunFlags(backend="none" if new else None, model=self.model if new else None,
                        out=self.out, resume=self.resume,
                        no_cache=self.no_cache, no_progress=not self.progress,
                        no_report=not self.report, shard=self.shard, executor=self.executor,
                        shards=self.shards, ray_address=self.ray_address)

    def variants(self) -> list[str]:
        names = [v.strip() for v in self.variant.split(",") if v.strip()]
        if not names:
            raise ValueError("--variant is empty")
        return list(dict.fromkeys(names))

    def run_dir(self) -> Path | None:
        """--out as a run directory; the older spelling `--out FILE.json` (a results file)
        runs in the folder FILE beside it."""
        if self.out is not None and self.out.suffix == ".json":
            return self.out.with_suffix("")
        return self.out

    def options(self) -> Any:
        """The benchmark's options; ValueError (one line) for a bad combination."""
        from pydantic import ValidationError

        from visioneval.benchmarks.layout.options import LayoutOptions

        if self.base_dir is None:
            raise ValueError("--base-dir is required (or --resume RUN_DIR)")
        earlier = self.semantic_from
        if earlier is None and self.skip_semantic and self.out is not None \
                and self.out.suffix == ".json" and self.out.is_file():
            earlier = self.out  # CANVAS's --skip_blip reads the file it is about to replace
        try:
            return LayoutOptions(
                base_dir=str(self.base_dir.resolve()), model=self.model,
                variants=self.variants(), ids=self.ids, workers=self.workers, viz=self.viz,
                skip_semantic=self.skip_semantic,
                semantic_from=str(earlier.resolve()) if earlier is not None else None,
                caption_backend=self.caption_backend, caption_model=self.caption_model,
                caption_base_url=self.caption_base_url,
                caption_api_key_env=self.caption_api_key_env,
                caption_prompt=self.caption_prompt, embedder=self.embedder)
        except ValidationError as exc:
            error = exc.errors()[0]
            if error["type"] == "value_error":
                raise ValueError(str(error["ctx"]["error"])) from None
            name = "--" + str(error["loc"][0]).replace("_", "-") if error["loc"] else "layout"
            raise ValueError(f"{name}: {error['msg']}") from None


def run_layout(args: LayoutArgs, console: Console, err: Console) -> int:
    """Run (or resume) the layout benchmark on the engine, as a request built the way every
    run command builds its own; then say where the results file and the pictures are. Exit
    code: 0 every sample scored, 1 some sample has a metric error or some pair was skipped
    (the results are still written), 2 (raised as a user error) nothing could run; as any
    run, 130 interrupted."""
    from visioneval.commands.flags import RunTarget, request_from
    from visioneval.commands.perform import perform
    from visioneval.core.records import GenerationSettings
    from visioneval.runs.output import Output

    output = Output(console, err, progress=args.progress, report=args.report)
    flags = args.flags()
    directory = args.resume if args.resume is not None else _run_dir(args, flags.distribution())
    again = {k: v for k, v in (("caption_base_url", args.caption_base_url),
                               ("caption_api_key_env", args.caption_api_key_env)) if v}
    target = RunTarget("layout", lambda: _benchmark(args, output), GenerationSettings,
                       fixed=args.given, resume_options=again)
    code = perform(request_from(dataclasses.replace(flags, out=directory)
                                if args.resume is None else flags, target), output)
    return _closing(directory, code, console, err) if code in (0, 1) else code


def _run_dir(args: LayoutArgs, how: Distribution) -> Path:
    """A new run's directory, named here so that the closing lines can point into it."""
    from visioneval.runs.session import default_run_dir

    directory = args.run_dir()
    if how.on_ray:
        return (directory or default_run_dir("layout", args.model)).absolute()
    if directory is None:
        directory = default_run_dir("layout", args.model)
        if how.shard is not None:
            directory = directory.with_name(f"{directory.name}-shard-{how.shard.dirname}")
    return directory


def _benchmark(args: LayoutArgs, output: Output) -> Benchmark:
    from visioneval.benchmarks.layout.benchmark import build

    benchmark = build(args.options())
    for gid in benchmark.collection.missing_ids:  # reads the folder: its errors are exit 2
        log.warning("--ids %s: no such sample", gid)
    directory = args.run_dir()
    if directory is not None and directory != args.out:
        line(output.err, f"note: --out {args.out} names a results file, as visioneval layout "
                         f"once wrote one: the run goes to the folder {directory} (its "
                         f"{directory / 'results.json'} holds what that file held)")
    return benchmark


def _closing(directory: Path, code: int, console: Console, err: Console) -> int:
    """Where the results file is; exit 1 when a sample has a metric error or a pair was
    skipped (both are named in the lines above and in the file)."""
    from visioneval.benchmarks.layout import tables

    results = directory / tables.RESULTS_JSON
    try:
        document = json.loads(results.read_text())
    except (OSError, ValueError):
        return code
    index = directory / tables.VIZ_DIR / "index.html"
    line(console, f"results: {results} and {directory / tables.RESULTS_CSV}"
                  + (f"; pictures: {index}" if index.exists() else ""))
    failed = sum(tables.has_error(s) for s in document.get("samples", []))
    skipped = len(document.get("skipped", []))
    if failed or skipped:
        line(err, f"{failed} sample(s) with a metric error, {skipped} pair(s) skipped (see the "
                  f"lines above and {results})", style="yellow")
        return max(code, 1)
    return code
