from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from visioneval.loopback.server import ServerScript, ThreadedServer  # noqa: E402

# isolated_home first: HOME and the caches are the session's own before anything else runs;
# fast_tier names the tests over a second not marked slow.
pytest_plugins = ("isolated_home", "fast_tier")


@pytest.fixture
def serve():
    """Start a loopback model server with a script; stopped at the end of the test."""
    started = []

    def start(**script):
        ctx = ThreadedServer(ServerScript(**script))
        server = ctx.__enter__()
        started.append(ctx)
        return server

    yield start
    for ctx in started:
        ctx.__exit__(None, None, None)


@pytest.fixture(scope="session")
def synth_data(tmp_path_factory) -> Path:
    """A small synthetic SalBench P3 set in the real schema (8 scenes per config)."""
    from visioneval.benchmarks.salbench.synth import write_synthetic

    root = tmp_path_factory.mktemp("synth")
    write_synthetic(root, 8, seed=3)
    return root


@pytest.fixture(scope="session")
def search_pool(tmp_path_factory) -> Path:
    """The visual-search thresholds' data for the adaptive method: one detection array per
    feature and a pool of 12 levels x 8 stimuli of orientation and colour (96 each)."""
    import numpy as np

    from visioneval.benchmarks.psychophysics.dataset import Design, write_dataset

    levels = tuple(float(f"{v:.3g}") for v in np.geomspace(1.0, 32.0, 12))  # equal ratios
    root = tmp_path_factory.mktemp("adaptive")
    write_dataset(root, Design(experiments=("detection",),
                               levels={"orientation": (8.0,), "color": (8.0,),
                                       "size": (0.3,)},
                               set_sizes=(4,), trials=1,
                               pool_levels={"orientation": levels, "color": levels},
                               pool_trials=8), seed=4)
    return root


@pytest.fixture(scope="session")
def illusion_data(tmp_path_factory) -> Path:
    """A small synthetic IllusionBench set in the real schema (12 rows per subset)."""
    from visioneval.benchmarks.illusionbench.synth import write_synthetic

    root = tmp_path_factory.mktemp("illusion")
    write_synthetic(root, 12, seed=5)
    return root


@pytest.fixture(scope="session", autouse=True)
def _click_command_built_once():
    """typer's CliRunner builds the click command tree from the app's signatures on every
    invoke (about 25 ms; some 17 s of the fast tier's CPU time). The app does not change
    once imported, so the tree is built once per app, as a `visioneval` process does."""
    import typer.testing

    build = getattr(typer.testing, "_get_command", None)
    if build is None:  # a typer that builds it elsewhere: every invoke builds it (slower)
        yield
        return
    built: dict[typer.Typer, object] = {}

    def get_command(app):
        if app not in built:
            built[app] = build(app)
        return built[app]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(typer.testing, "_get_command", get_command)
        yield


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path, monkeypatch):
    """No test reads a real key or writes to the user's cache; the terminal is 100 columns."""
    for name in ("OPENAI_API_KEY", "OPENROUTER_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    # The terminal visioneval draws for (tables and sentences fit 100 columns); rich reads
    # the width of a captured output from here, else assumes 80.
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
