"""A new run's metrics read from its journal while answers arrive (`live_summary`): the files
are byte for byte those the journal streamed after the run gives, for every benchmark; the
records are read during the run, in its quiet moments; and any journal the streamed pass
could read differently (a sample id twice, a line that is not a record, a torn last line, a
record not in the data, a summary that raises or stops early) makes the session read the
journal after the run instead."""

from __future__ import annotations

import asyncio
import shutil
import threading
from pathlib import Path

import pytest
from cli_helpers import invoke, salbench_args

from visioneval.benchmarks.psychophysics.dataset import Design, write_dataset
from visioneval.benchmarks.salbench.synth import write_synthetic
from visioneval.commands.loopback import ObserverFlags, build_script
from visioneval.core import registry
from visioneval.core.idset import IdSet
from visioneval.core.records import Record, Response
from visioneval.core.rundir import load
from visioneval.core.store import RunStore
from visioneval.engine.runner import RunStats
from visioneval.loopback.server import answer_hash, answer_popout
from visioneval.report.page import write_page
from visioneval.report.thumbs import RUN_END_THUMBS
from visioneval.runs.live_summary import LiveSummary, summary_of
from visioneval.runs.session import finish
from visioneval.variants.family import rebuilt

LATENCY = 0.05  # answers come in waves, with quiet moments between them
READ_LIVE = "read from samples.jsonl while answers arrived"
OWN = Path(__file__).parents[1] / "examples" / "own_benchmark"


# -- the same files both ways -------------------------------------------------------------
def streamed_again(run: Path, tmp_path: Path, definition: str | None = None) -> Path:
    """A copy of the run whose metrics, variants and tables are written again by `finish`
    streaming the journal (no live summary), everything else it writes removed first."""
    again = tmp_path / f"{run.name}-streamed"
    shutil.copytree(run, again)
    for path in again.iterdir():
        if path.name not in ("run.json", "samples.jsonl"):
            path.unlink()
    store = RunStore.open(again)
    benchmark = registry.build_for_run(store.info, definition, again, to_read=True)
    benchmark = rebuilt(benchmark, store.info, registry.for_run(store.info, definition))
    finish(benchmark, store, "finished", RunStats())
    return again


def assert_same_both_ways(run: Path, tmp_path: Path, definition: str | None = None,
                          page: bool = True) -> None:
    """metrics.json, variants.json, the tables, run.json's counts and (`page`) the end-of-run
    page, its browser rows read with the metrics, are those of the journal streamed again."""
    again = streamed_again(run, tmp_path, definition)
    written = {p.name for p in again.iterdir()} - {"run.json", "samples.jsonl"}
    assert "metrics.json" in written
    assert written == {p.name for p in run.iterdir()} - {"run.json", "samples.jsonl",
                                                         "report.html", ".lock"}
    for name in sorted(written):
        assert (run / name).read_bytes() == (again / name).read_bytes(), name
    counts = RunStore.open(run).info.counts
    assert counts is not None and counts == RunStore.open(again).info.counts
    if page:  # drawn again, the journal streamed for its rows, the data read for thumbnails
        drawn = (run / "report.html").read_bytes()
        assert write_page(load(run, definition, check_data=False),
                          RUN_END_THUMBS).read_bytes() == drawn


def ran_live(result, code: int = 0) -> None:
    assert result.exit_code == code, result.output  # 1: samples failed
    assert READ_LIVE in result.stderr  # -v: the debug line says which way they were read


@pytest.fixture(scope="module")
def scenes(tmp_path_factory) -> Path:
    """Synthetic SalBench P3 scenes, 4 of them target-absent controls."""
    root = tmp_path_factory.mktemp("scenes")
    write_synthetic(root, 8, seed=3, target_absent=4)
    return root


def salbench(serve, data: Path, out: Path, *extra: str):
    """Some requests fail (errors are in the metrics too): exit code 1."""
    server = serve(answer=answer_popout, latency_s=LATENCY, fail_rate=0.3, faults=("500",))
    return invoke(*salbench_args(server, data, out, "--splits", "synthetic", "--concurrency",
                                 "4", "--max-attempts", "1", "--no-cache", "-v", *extra))


@pytest.mark.slow
def test_salbench_metrics_read_live_are_the_streamed_ones(serve, scenes, tmp_path):
    out = tmp_path / "run"
    ran_live(salbench(serve, scenes, out, "--configs", "P3"), code=1)
    assert_same_both_ways(out, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("extra", [("--prompt", "both"),
                                   ("--configs", "P3,P3_box", "--variant", "blind,jpeg:50")],
                         ids=["prompt-both", "variants"])
def test_salbench_with_a_second_family_or_variants(serve, scenes, tmp_path, extra):
    out = tmp_path / "run"
    ran_live(salbench(serve, scenes, out, *extra), code=1)
    variants = "--variant" in extra
    assert (out / "variants.json").exists()  # --prompt both: its second family's figures
    # A variant's images are made during the run only: drawn again, its page reads the
    # data for thumbnails and finds none of them (`test_rows_read_live_draw_the_same_page`).
    assert_same_both_ways(out, tmp_path, page=not variants)


@pytest.mark.slow
def test_illusionbench_every_protocol(serve, illusion_data, tmp_path):
    server = serve(answer=answer_hash, latency_s=LATENCY)
    out = tmp_path / "run"
    ran_live(invoke("illusionbench", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--data-dir", illusion_data,
                    "--out", out, "--no-progress", "--protocol", "all", "--subsets", "ICON",
                    "--concurrency", "4", "--no-cache", "-v"))
    assert_same_both_ways(out, tmp_path)


@pytest.mark.slow
def test_vqa(serve, tmp_path):
    server = serve(answer=answer_hash, latency_s=LATENCY)
    out = tmp_path / "run"
    ran_live(invoke("vqa", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data", Path(__file__).parents[1] / "examples" / "vqa"
                    / "questions.jsonl", "--scorer", "choice", "--group-col", "category",
                    "--out", out, "--no-progress", "--concurrency", "2", "--no-cache", "-v"))
    assert_same_both_ways(out, tmp_path)


@pytest.mark.slow
def test_psychophysics(serve, tmp_path):
    data = tmp_path / "stimuli"
    write_dataset(data, Design(experiments=("detection", "presence"), levels={
        "orientation": (2.0, 8.0, 32.0), "color": (2.0, 8.0, 32.0), "size": (0.1, 0.4)},
        set_sizes=(4,), trials=6, pool_levels={}), seed=1)
    script = build_script(("m",), "observer", 0.0, 0.0, "500", 0,
                          observer=ObserverFlags(curves="orientation=8:3:0.02"))
    server = serve(answer=script.answer, latency_s=LATENCY)
    out = tmp_path / "run"
    ran_live(invoke("psychophysics", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--data", data, "--out", out,
                    "--no-progress", "--no-cache", "--bootstrap", "100", "--concurrency", "6",
                    "-v"))
    assert_same_both_ways(out, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("own", ["colours", "standout"])
def test_a_benchmark_of_your_own(serve, synth_data, tmp_path, own):
    server = serve(answer=answer_hash, latency_s=LATENCY)
    definition = {"colours": f"{OWN / 'colours.py'}:ColoursDefinition",
                  "standout": f"{OWN / 'standout.py'}:StandOutDefinition"}[own]
    options = ["-o", "n=12"] if own == "colours" else ["-o", f"data={synth_data / 'P3'}"]
    out = tmp_path / "run"
    ran_live(invoke("run", definition, "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", *options, "--out", out,
                    "--no-progress", "--no-cache", "--concurrency", "3", "-v"))
    assert_same_both_ways(out, tmp_path, definition)


# -- the live summary on its own, on a journal written in waves -----------------------------
@pytest.fixture(scope="module")
def answered(synth_data):
    """SalBench P3 records as the engine writes them: answers, unparsed ones, errors."""
    benchmark = registry.build("salbench", {"data_dir": str(synth_data), "configs": ["P3"]})
    records = []
    for i, sample in enumerate(benchmark.samples()):
        text = ["orientation", "I cannot tell", None, "color, size"][i % 4]
        response = Response(text=text) if text else Response(error="HTTP 500")
        parsed, scores = benchmark.score(sample, text) if text else ({}, {})
        records.append(Record(id=sample.id, group=sample.group, target=sample.target,
                              response=response, metadata=sample.metadata,
                              prompt=sample.prompt_summary(), parsed=parsed, scores=scores))
    return benchmark, records


def line(record: Record) -> bytes:
    return record.model_dump_json().encode() + b"\n"


def journal_in_waves(live: LiveSummary, path: Path, waves: list[list[bytes]],
                     quiet: float = 0.06) -> int:
    """Append each wave's lines as the engine's writer does, telling the summary of each,
    then leave the loop quiet; the records read by the end of the waves."""
    async def go() -> int:
        watch = live.watching()
        with open(path, "ab", buffering=0) as journal:
            for wave in waves:
                for each in wave:
                    journal.write(each)
                    watch(None, None)  # type: ignore[arg-type]
                await asyncio.sleep(quiet)
        return live.records_read
    return asyncio.run(go())


def last_wave(live: LiveSummary, path: Path, lines: list[bytes]) -> None:
    """Lines journaled as the run ends (the loop has stopped)."""
    watch = live.watching()
    with open(path, "ab") as journal:
        for each in lines:
            journal.write(each)
            watch(None, None)  # type: ignore[arg-type]


def streamed(benchmark, directory: Path) -> dict:
    store = RunStore(directory, None)  # type: ignore[arg-type]  # the journal alone
    return summary_of(benchmark, store.iter_latest()).metrics


def test_records_are_read_in_quiet_moments_and_give_the_streamed_summary(answered, tmp_path):
    benchmark, records = answered
    path = tmp_path / "samples.jsonl"
    live = LiveSummary(benchmark, path)
    lines = [line(r) for r in records]
    read = journal_in_waves(live, path, [lines[:3], lines[3:6]])
    assert read == 6  # both waves read while the "run" went on
    last_wave(live, path, lines[6:])  # read at the end
    found = live.result(IdSet(r.id for r in records))
    assert found is not None and found.tally.records == len(records)
    assert found.tally.errors == sum(not r.ok for r in records)
    assert found.metrics == streamed(benchmark, tmp_path)


def test_a_line_being_written_waits_for_its_end(answered, tmp_path):
    benchmark, records = answered
    path = tmp_path / "samples.jsonl"
    live = LiveSummary(benchmark, path)
    first, second = line(records[0]), line(records[1])
    read = journal_in_waves(live, path, [[first, second[:25]]])
    assert read == 1
    with open(path, "ab") as journal:  # the rest of the same record
        journal.write(second[25:])
    found = live.result(IdSet(r.id for r in records))
    assert found is not None and found.tally.records == 2


@pytest.mark.parametrize("spoiled", ["twice", "not a record", "torn", "not in data",
                                     "other id", "not the session's"])
def test_a_journal_the_streamed_pass_could_read_otherwise_is_left_to_it(answered, tmp_path,
                                                                       spoiled):
    benchmark, records = answered
    path = tmp_path / "samples.jsonl"
    live = LiveSummary(benchmark, path)
    lines = [line(r) for r in records]
    data = [r.id for r in records]
    if spoiled == "twice":  # the streamed pass keeps the later record only
        lines.append(line(records[0].model_copy(update={"response": Response(text="size")})))
    elif spoiled == "not a record":
        lines.insert(2, b'{"id": "x", "group": "P3"}\n')
    elif spoiled == "not in data":
        data.remove(records[3].id)
    elif spoiled == "other id":  # the id the journal index reads is not the record's
        lines[1] = lines[1].replace(b'{"id":', b'{"id":"elsewhere","id":', 1)
    if spoiled == "not the session's":  # a line its writer did not write
        outside = lines.pop()
        journal_in_waves(live, path, [lines[:4], lines[4:]])
        with open(path, "ab") as journal:
            journal.write(outside)
    else:
        journal_in_waves(live, path, [lines[:4], lines[4:]])
    if spoiled == "torn":
        last_wave(live, path, [line(records[0])[:30]])
    assert live.result(IdSet(data)) is None


class Raises:
    """A benchmark whose summary raises after its first record, or stops reading there."""

    def __init__(self, benchmark, stops: bool):
        self.benchmark, self.stops = benchmark, stops

    def summarize(self, records):
        for _ in records:
            if self.stops:
                return {"n": 1}
            raise ValueError("a bug in the summary")
        return {}


@pytest.mark.parametrize("stops", [False, True], ids=["raises", "stops-early"])
def test_a_summary_that_raises_or_stops_early_is_not_used(answered, tmp_path, stops):
    benchmark, records = answered
    path = tmp_path / "samples.jsonl"
    live = LiveSummary(Raises(benchmark, stops), path)  # type: ignore[arg-type]
    journal_in_waves(live, path, [[line(r) for r in records]])
    assert live.result(IdSet(r.id for r in records)) is None


class Counting:
    """A reader of the records beside the summary; `fails_at`: it raises at that record."""

    def __init__(self, fails_at: int | None = None):
        self.ids: list[str] = []
        self.fails_at = fails_at
        self.complete = False

    def add(self, record: Record) -> None:
        if len(self.ids) == self.fails_at:
            raise KeyError("a bug in the reader")
        self.ids.append(record.id)

    def whole(self) -> None:
        self.complete = True


def test_readers_are_told_every_record_and_one_that_raises_only_stops_itself(answered,
                                                                               tmp_path):
    benchmark, records = answered
    path = tmp_path / "samples.jsonl"
    reads, fails = Counting(), Counting(fails_at=2)
    live = LiveSummary(benchmark, path, [fails, reads])
    lines = [line(r) for r in records]
    journal_in_waves(live, path, [lines[:3], lines[3:5]])
    last_wave(live, path, lines[5:])
    assert live.result(IdSet(r.id for r in records)) is not None
    assert reads.ids == [r.id for r in records] and reads.complete
    assert len(fails.ids) == 2 and not fails.complete


def test_a_loop_never_quiet_leaves_the_journal_to_the_end(answered, tmp_path):
    benchmark, records = answered
    path = tmp_path / "samples.jsonl"
    live = LiveSummary(benchmark, path)
    journal_in_waves(live, path, [[line(r) for r in records]], quiet=0.0)
    assert live.records_read == 0 and not _threads()
    assert live.result(IdSet(r.id for r in records)) is None


def test_abandoned_it_stops_reading(answered, tmp_path):
    benchmark, records = answered
    path = tmp_path / "samples.jsonl"
    live = LiveSummary(benchmark, path)
    journal_in_waves(live, path, [[line(r) for r in records[:4]]])
    assert _threads()  # waiting for the next quiet moment
    live.abandon()
    for thread in _threads():
        thread.join(timeout=5)
    assert not _threads()


def _threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "live-summary"]


# -- sessions that end otherwise ------------------------------------------------------------
@pytest.mark.slow
def test_a_stopped_run_and_its_resume_read_the_journal_after_the_run(serve, scenes,
                                                                      tmp_path):
    """--max-cost stops a new run: its metrics are the journal's, streamed; so are those of
    the session that resumes it."""
    server = serve(answer=answer_popout, latency_s=LATENCY)
    out = tmp_path / "run"
    # About 170 tokens a request at $1000 per million: each answer costs about $0.17.
    result = invoke(*salbench_args(server, scenes, out, "--splits", "synthetic", "--configs",
                                   "P3", "--concurrency", "1", "--no-cache", "-v",
                                   "--max-cost", "0.5", "--price-in", "1000",
                                   "--price-out", "1000"))
    assert result.exit_code == 3, result.output
    assert READ_LIVE not in result.stderr
    assert RunStore.open(out).info.status == "stopped"
    assert_same_both_ways(out, tmp_path, page=False)  # a stopped run draws no page
    result = invoke("salbench", "--resume", out, "--no-progress", "-v", "--base-url",
                    server.base_url + "/v1")
    assert result.exit_code == 0, result.output
    assert READ_LIVE not in result.stderr and "read from samples.jsonl after the run" \
        not in result.stderr  # a resumed session has no live summary at all
    assert_same_both_ways(out, tmp_path / "resumed")


# -- the report page's rows, read with the metrics -------------------------------------------
def new_run(server, data: Path, out: Path, variants: tuple[str, ...] = (),
            continuing: bool = False):
    """A new run as the commands start one (its page's thumbnails and rows prepared)."""
    from rich.console import Console

    from visioneval.backends.registry import BackendSpec
    from visioneval.core.records import GenerationSettings
    from visioneval.core.store import RunLock
    from visioneval.engine.options import EngineOptions
    from visioneval.runs.execute import Continuing, execute
    from visioneval.runs.output import Output
    from visioneval.runs.spec import RunSpec

    definition = registry.definition("salbench")
    benchmark = registry.build("salbench", {"data_dir": str(data), "configs": ["P3"],
                                            "splits": ["synthetic"]})
    if variants:
        from visioneval.variants.family import with_variants

        benchmark = with_variants(benchmark, list(variants), definition)
    spec = BackendSpec(kind="openai", model="m", base_url=server.base_url + "/v1")
    request = RunSpec.of(benchmark, backend=spec, generation=GenerationSettings(max_tokens=64),
                         engine=EngineOptions(concurrency=4, max_attempts=1), out=out)
    quiet = Console(quiet=True)
    lock = RunLock(out)
    try:
        output = Output(quiet, quiet, progress=False, early_thumbnails=True)
        return asyncio.run(execute(request, out, output, lock,
                                   Continuing(resumed=False) if continuing else None))
    finally:
        lock.release()


@pytest.mark.slow
@pytest.mark.parametrize("variants", [(), ("blind", "jpeg:50")], ids=["plain", "variants"])
def test_rows_read_live_draw_the_same_page(serve, scenes, tmp_path, variants):
    server = serve(answer=answer_popout, latency_s=LATENCY, fail_rate=0.3, faults=("500",))
    run = tmp_path / "run"
    result = new_run(server, scenes, run, variants)
    assert result.page_rows is not None and result.page_rows.chosen.total == result.n_records
    view = load(run, check_data=False)
    made = dict(result.thumbnails)
    drawn = write_page(view, RUN_END_THUMBS, ready=made, rows=result.page_rows).read_bytes()
    assert write_page(load(run, check_data=False), RUN_END_THUMBS,
                      ready=made).read_bytes() == drawn  # the journal streamed for them


@pytest.mark.slow
def test_a_continued_session_reads_the_rows_from_the_journal(serve, scenes, tmp_path):
    """A session on a journal that holds records (a resume, a suite's run found half done)
    reads neither its metrics nor its page's rows while it runs."""
    server = serve(answer=answer_popout, latency_s=LATENCY, fail_rate=0.3, faults=("500",))
    run = tmp_path / "run"
    first = new_run(server, scenes, run)
    assert first.page_rows is not None and first.n_errors > 0  # the errors are sent again
    server.script.fail_rate = 0.0
    again = new_run(server, scenes, run, continuing=True)
    assert again.n_errors == 0 and again.page_rows is None
    assert_same_both_ways(run, tmp_path, page=False)
