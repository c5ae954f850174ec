"""measure/psychophysics_loopback_recovery.py: its recovery of the simulated observer's
thresholds and d′ through real runs against the loopback server, at two observer seeds and
a small bootstrap, and its reading of the psychophysics flags it passes through."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

from visioneval.benchmarks.psychophysics.dataset import Design, write_dataset
from visioneval.stats.psychometric import criterion_level

SCRIPT = Path(__file__).parents[1] / "measure" / "psychophysics_loopback_recovery.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("psychophysics_loopback_recovery", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_flags_are_read_by_the_psychophysics_command_and_the_scripts_own_are_refused(
        script, tmp_path):
    settings = script.parse_flags(["--criterion", "0.8", "--concurrency", "4",
                                   "--max-tokens", "8"], tmp_path, 50)
    options = settings.options
    assert options.criterion == 0.8 and options.bootstrap == 50 and options.form == "weibull"
    assert options.experiments == ["detection", "presence"]
    # every run sends the same stimuli: never a cached answer of another observer seed
    assert settings.engine.concurrency == 4 and settings.engine.cache_path is None
    assert settings.generation.max_tokens == 8
    assert script.parse_flags([], tmp_path, 50).generation.max_tokens == 16
    with pytest.raises(ValueError, match="--out"):
        script.parse_flags(["--out", str(tmp_path / "x")], tmp_path, 50)
    with pytest.raises(ValueError, match="--base-url"):
        script.parse_flags(["--base-url", "http://127.0.0.1:1/v1"], tmp_path, 50)
    with pytest.raises(ValueError, match="No such option: --placement"):
        script.parse_flags(["--placement", "psi"], tmp_path, 50)
    with pytest.raises(ValueError, match="--criterion: "):
        script.parse_flags(["--criterion", "0.2"], tmp_path, 50)


@pytest.mark.slow
def test_two_observer_seeds_recover_the_thresholds_and_dprime(script, tmp_path):
    data = tmp_path / "data"  # the default levels, 10 trials per level for speed
    write_dataset(data, Design(experiments=("detection", "presence"), trials=10), seed=0)
    observer = script.ObserverSpec()
    summary = script.recover(data, tmp_path / "runs", [0, 1], observer, bootstrap=40,
                             workers=1)
    assert summary.runs == 2 and summary.n_errors == 0 and summary.n_unparsed == 0
    assert [f.feature for f in summary.features] == ["orientation", "color", "size"]
    for feature, (alpha, beta, lapse) in {"orientation": (8, 3, 0.02),
                                          "color": (6, 2.5, 0.02),
                                          "size": (0.15, 2, 0.02)}.items():
        found = next(f for f in summary.features if f.feature == feature)
        assert found.true == pytest.approx(criterion_level(0.75, alpha, beta, 1 / 3, lapse))
        assert 0 <= found.reached <= 2 and found.coverage in (0.0, 0.5, 1.0)
        assert found.coverage <= found.reached / 2
        assert found.below + found.above + round(2 * found.coverage) <= 2
        if found.reached:  # 80 trials per level pair: within a factor of two
            assert abs(found.median_error) < 1.0 and found.median_abs_error >= 0
            assert found.median_width > 0
        assert found.median_seconds > 0
    # two runs of 3 x 8 presence levels, and the always-yes run
    assert [len(f.presence) for f in summary.figures] == [24, 24, 24]
    pooled, each, yes_pooled, yes_each = summary.detection
    assert pooled.estimates == 2 and each.estimates == 48 and yes_each.estimates == 24
    assert pooled.true_dprime == 1.5 and abs(pooled.median_dprime - 1.5) < 0.6
    assert 0 <= pooled.coverage_dprime <= 1 and 0 <= each.coverage_c <= 1
    assert yes_pooled.largest_abs_dprime < 0.2 and yes_each.largest_abs_dprime < 0.2
    assert yes_pooled.median_c < -1 and yes_pooled.coverage_c is None
    assert math.isinf(yes_pooled.true_c)
    lines = script.table(summary)
    assert any(line.startswith("| orientation (8.09 deg) |") for line in lines)
