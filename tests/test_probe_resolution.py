"""`visioneval probe resolution` against loopback servers that reduce images by a known
factor before the canary reader looks: the probe says "no loss" when nothing is reduced and
recovers the factor when it is; the canaries arrive as sent; failed requests are errors,
never wrong answers."""

from __future__ import annotations

import asyncio
import io
import json

import numpy as np
import pybase64
import pytest
from cli_helpers import invoke
from PIL import Image, PngImagePlugin

from visioneval.backends.registry import BackendSpec, make_backend
from visioneval.commands.loopback import build_script
from visioneval.loopback.resize import resized, target_size
from visioneval.loopback.server import Prompt, answer_canary
from visioneval.probe import reader
from visioneval.probe.canary import (
    GREY,
    QUESTION,
    CanaryDesign,
    CanaryParams,
    read_canary,
    render,
    series,
)
from visioneval.probe.resolution import (
    ProbeSettings,
    Trial,
    ask,
    estimate,
    measure_resolution,
    read_answer,
)

CANVAS = 512  # the factor is canvas-free (periods are in sent pixels); 512 keeps it quick


def _spec(server) -> BackendSpec:
    return BackendSpec(kind="openai", model="m", base_url=f"{server.base_url}/v1")


def _settings(long_side: int = CANVAS, **changes) -> ProbeSettings:
    design = CanaryDesign(long_side=long_side, **changes.pop("design", {}))
    return ProbeSettings(design=design, backoff_base_s=0.0, backoff_cap_s=0.0, **changes)


def _ask(server, settings: ProbeSettings) -> list[Trial]:
    async def go() -> list[Trial]:
        async with make_backend(_spec(server)) as backend:
            return await ask(backend, settings)

    return asyncio.run(go())


def _pixels(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("L"), dtype=np.int16)


def test_a_canary_is_the_grating_its_text_chunk_describes():
    design = CanaryDesign(long_side=256, levels=2, trials=2, seed=4)
    for params in series(design):
        png = render(params)
        assert read_canary(png) == params
        grey = _pixels(png)
        assert grey.shape == (256, 256)
        start = (256 - params.patch_side) // 2
        assert (grey[:start] == GREY).all() and (grey[:, -start:] == GREY).all()
        patch = grey[start:start + params.patch_side, start:start + params.patch_side]
        along = patch[0] if params.orientation == "vertical" else patch[:, 0]
        flat = patch[:, 0] if params.orientation == "vertical" else patch[0]
        assert flat.max() == flat.min()
        x = np.arange(params.patch_side) + 0.5 - params.patch_side / 2
        drawn = GREY + params.amplitude * np.cos(2 * np.pi * x / params.period + params.phase)
        assert np.abs(along - drawn).max() <= 0.5 + 1e-9  # the described grating, rounded
        assert reader.profiles(png).orientation() == params.orientation


def test_the_series_is_seeded_and_fills_its_bands():
    design = CanaryDesign(levels=16, trials=10, seed=7)
    canaries = series(design)
    assert len(canaries) == design.requests == 160
    edges = design.edges()
    assert edges[0] == 2.0 and edges[-1] == pytest.approx(64.0)
    for c in canaries:
        assert edges[c.level] <= c.period <= edges[c.level + 1]
    assert {c.orientation for c in canaries} == {"horizontal", "vertical"}
    assert series(design) == canaries
    assert series(CanaryDesign(seed=8)) != canaries
    with pytest.raises(ValueError, match="fewer than 3 stripes"):
        CanaryDesign(long_side=128)


def _with_chunk(pixels: Image.Image, params: CanaryParams) -> bytes:
    info = PngImagePlugin.PngInfo()
    info.add_text("visioneval", params.text())
    buf = io.BytesIO()
    pixels.save(buf, format="PNG", pnginfo=info)
    return buf.getvalue()


def test_the_canary_reader_reads_pixels_not_the_text_chunk():
    vertical = next(c for c in series(CanaryDesign(long_side=256, seed=1))
                    if c.orientation == "vertical" and c.period > 8)
    claims_horizontal = vertical.model_copy(update={"orientation": "horizontal"})
    with Image.open(io.BytesIO(render(vertical))) as image:
        lying = _with_chunk(image.copy(), claims_horizontal)
    assert reader.read(lying) == "vertical"
    flat = _with_chunk(Image.new("L", (256, 256), GREY), vertical)
    assert reader.profiles(flat).orientation() is None
    assert reader.read(flat) == reader.guess(flat)  # a forced guess, from the bytes
    prompt = Prompt(QUESTION, [pybase64.b64encode(lying).decode()])
    assert answer_canary(prompt) == "vertical"


def test_the_reduction_keeps_the_aspect_and_makes_a_png():
    assert target_size(2048, 1024, 2.0, None) == (1024, 512)
    assert target_size(3000, 2000, None, 1568) == (1568, 1045)
    assert target_size(1000, 800, None, 1568) == (1000, 800)
    assert target_size(4000, 1000, 2.0, 1568) == (1568, 392)
    buf = io.BytesIO()
    Image.new("RGB", (300, 200), (10, 200, 30)).save(buf, format="JPEG")
    small = resized(buf.getvalue(), 3.0, None)
    assert small is not None and small.startswith(b"\x89PNG")
    with Image.open(io.BytesIO(small)) as image:
        assert image.size == (100, 67) and image.mode == "RGB"
    assert resized(buf.getvalue(), None, 400) is None  # already within: sent on as it is


def test_the_server_gets_the_canary_as_sent_and_the_answer_sees_it_reduced(serve):
    seen: list[tuple[int, int, str | None]] = []

    def record(prompt: Prompt) -> str:
        image = prompt.last_image()
        assert image is not None
        with Image.open(io.BytesIO(image)) as decoded:
            seen.append((*decoded.size, decoded.info.get("visioneval")))
        return answer_canary(prompt)

    server = serve(answer=record, downscale=2.0)
    server.stats.keep_bodies = True
    settings = _settings(256, design={"levels": 2, "trials": 2, "seed": 3})
    trials = _ask(server, settings)
    assert [t.canary for t in trials] == series(settings.design)
    assert all(t.error is None and t.answer is not None for t in trials)
    sent = []
    for body in server.stats.bodies:
        image = body["messages"][0]["content"][0]["image_url"]["url"]
        assert image.startswith("data:image/png;base64,")
        png = pybase64.b64decode(image.split(",", 1)[1])
        params = read_canary(png)
        assert png == render(params)  # byte for byte what the probe drew
        assert _pixels(png).shape == (256, 256)
        sent.append(params)
    assert sorted(sent, key=lambda p: (p.level, p.trial)) == series(settings.design)
    assert seen == [(128, 128, None)] * 4  # reduced, and the text chunk did not survive


@pytest.mark.slow
def test_no_reduction_means_no_loss(serve):
    found = measure_resolution(_spec(serve(answer=answer_canary)), _settings())
    assert found.status == "no loss", found.summary
    assert found.summary.startswith("no loss measurable down to a period of 2 px")
    assert found.threshold_period is None and found.effective_long_side is None
    assert found.n_requests == 160 and found.n_errors == 0
    assert sum(b.correct for b in found.bands) >= 155


@pytest.mark.slow
@pytest.mark.parametrize("factor", [2.0, 4.0])
def test_a_known_downscale_is_recovered(serve, factor):
    """Three seeded designs: each estimate within 25% of the factor, and at least two of
    the three 95% intervals cover it (the benchmark measures 82-95% coverage, see
    docs/probe.md: one miss in three is expected now and then, two are not)."""
    server = serve(answer=answer_canary, downscale=factor)
    covered = 0
    for seed in range(3):
        found = measure_resolution(_spec(server), _settings(design={"seed": seed}))
        assert found.status == "loss", found.summary
        assert found.factor is not None and found.factor_interval is not None
        assert found.factor == pytest.approx(factor, rel=0.25)
        assert found.effective_long_side == pytest.approx(CANVAS / factor, rel=0.25)
        low, high = found.factor_interval
        covered += low <= factor <= (high or float("inf"))
        assert found.summary.startswith("detail finer than 1/")
        assert f"the images were sent at {CANVAS} px" in found.summary
    assert covered >= 2


@pytest.mark.slow
def test_a_long_edge_cap_of_1024_on_2048_is_a_factor_of_2(serve):
    found = measure_resolution(_spec(serve(answer=answer_canary, max_side=1024)),
                               _settings(2048))
    assert found.status == "loss", found.summary
    assert found.factor_interval is not None
    low, high = found.factor_interval
    assert low <= 2.0 <= (high or float("inf")), found.factor_interval
    assert found.effective_long_side == pytest.approx(1024, rel=0.25)


@pytest.mark.slow
def test_failed_requests_are_errors_not_wrong_answers(serve):
    settings = _settings(max_attempts=1)
    clean = _ask(serve(answer=answer_canary, downscale=2.0), settings)
    flaky = serve(answer=answer_canary, downscale=2.0, fail_rate=0.25, faults=("500",))
    trials = _ask(flaky, settings)
    failed = [t for t in trials if t.error is not None]
    assert len(failed) == flaky.stats.faults > 10
    assert all("500" in (t.error or "") for t in failed)
    for mine, theirs in zip(trials, clean, strict=True):
        assert mine.canary == theirs.canary
        assert mine.correct is None if mine.error else mine.correct == theirs.correct
    found = estimate(trials, settings)
    assert found.n_errors == len(failed) and found.n_answered == 160 - len(failed)
    assert sum(b.errors for b in found.bands) == len(failed)
    assert sum(b.correct for b in found.bands) == sum(bool(t.correct) for t in trials)
    assert f"{len(failed)} of 160 requests failed (errors, not scored)" in found.summary
    assert found.status == "loss" and found.factor_interval is not None


def test_answers_that_never_differ_from_guessing_give_no_estimate(serve):
    found = measure_resolution(_spec(serve(answer=build_script(
        ("m",), "fixed:Horizontal.", 0.0, 0.0, "500", 0).answer)),
        _settings(256, design={"levels": 4, "trials": 6}))
    assert found.status == "not measured"
    assert found.reason is not None and "guessing" in found.reason
    assert found.summary.startswith("no estimate:")
    assert found.effective_long_side is None and found.n_unparsed == 0


def test_an_answer_names_an_orientation_or_is_unparsed():
    assert read_answer("Vertical.") == "vertical"
    assert read_answer("The stripes are horizontal, not vertical.") == "horizontal"
    assert read_answer("They run horizontally") == "horizontal"
    assert read_answer("I cannot tell.") is None


def test_the_command_prints_the_bands_and_the_estimate(serve):
    server = serve(answer=answer_canary, downscale=2.0)
    args = ["probe", "resolution", "--backend", "openai", "--base-url",
            f"{server.base_url}/v1", "--model", "m", "--long-side", "256", "--levels", "4",
            "--trials", "3"]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "Correct answers by stripe period" in result.stdout
    assert "the images were sent at 256 px" in result.stdout or \
        "no estimate" in result.stdout or "no loss" in result.stdout
    as_json = invoke(*args, "--json")
    found = json.loads(as_json.stdout)
    assert found["n_requests"] == 12 and len(found["bands"]) == 4
    assert found["canvas_long_side"] == 256


def test_the_command_says_what_is_missing_in_one_line():
    result = invoke("probe", "resolution", "--model", "m")
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("error: give --backend and --model")
    builtin = invoke("probe", "resolution", "--backend", "builtin", "--model", "random")
    assert builtin.exit_code == 2 and "needs a model server" in builtin.stderr


def test_loopback_reduction_flags(serve):
    with pytest.raises(ValueError, match="--downscale 0.5"):
        build_script(("m",), "canary", 0.0, 0.0, "500", 0, downscale=0.5)
    script = build_script(("m",), "canary", 0.0, 0.0, "500", 0, downscale=2.0, max_side=1568)
    assert script.served_checkpoint() == \
        "loopback/answer_canary+downscale-2+max-side-1568"
    result = invoke("loopback", "--port", "0", "--downscale", "0")
    assert result.exit_code == 2 and "--downscale 0" in result.stderr


def test_a_refused_key_is_one_line_and_never_printed(serve, monkeypatch):
    server = serve(answer=answer_canary, required_key="right-key")
    monkeypatch.setenv("PROBE_TEST_KEY", "wrong-key-123")
    result = invoke("probe", "resolution", "--backend", "openai", "--base-url",
                    f"{server.base_url}/v1", "--model", "m", "--api-key-env",
                    "PROBE_TEST_KEY", "--long-side", "256", "--levels", "2", "--trials", "1")
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.stderr
    assert "wrong-key-123" not in result.output
    assert server.stats.requests == 0  # stopped at the server check, no canary sent
    assert "sending" not in result.stderr  # the key is checked before the canaries are said


def test_a_missing_key_variable_is_said_before_any_canary(serve, monkeypatch):
    server = serve(answer=answer_canary, required_key="right-key")
    monkeypatch.delenv("PROBE_ABSENT_KEY", raising=False)
    result = invoke("probe", "resolution", "--backend", "openai", "--base-url",
                    f"{server.base_url}/v1", "--model", "m", "--api-key-env",
                    "PROBE_ABSENT_KEY", "--long-side", "256", "--levels", "2", "--trials", "1")
    assert result.exit_code == 2, result.output
    assert "PROBE_ABSENT_KEY" in result.stderr and "sending" not in result.stderr
    assert server.stats.requests == 0


def test_a_probe_whose_every_request_failed_exits_nonzero_in_one_line(serve):
    server = serve(answer=answer_canary, fail_rate=1.0, faults=("500",))
    result = invoke("probe", "resolution", "--backend", "openai", "--base-url",
                    f"{server.base_url}/v1", "--model", "m", "--long-side", "256",
                    "--levels", "2", "--trials", "2", "--max-attempts", "1")
    assert result.exit_code == 1, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "none of the 4 stripe images was answered" in errors[0]
    assert "4 x HTTP 500" in errors[0]


def test_the_probe_shows_the_engine_s_progress_bar_after_the_key_is_checked(serve):
    server = serve(answer=answer_canary)
    result = invoke("probe", "resolution", "--backend", "openai", "--base-url",
                    f"{server.base_url}/v1", "--model", "m", "--long-side", "256",
                    "--levels", "2", "--trials", "2")
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    sending = next(i for i, line in enumerate(lines) if line.startswith("sending 4 stripe images"))
    bar = next(i for i, line in enumerate(lines) if "4/4" in line and "errors" in line)
    assert sending < bar and "stripe images" in lines[bar]
