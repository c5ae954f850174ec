"""measure/few_clusters.py: its candidate intervals and paired tests agree with their
formulas on small runs, and a tiny coverage and type-I run gives every method a share."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from scipy.stats import t as student_t

SCRIPT = Path(__file__).parents[1] / "measure" / "few_clusters.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("few_clusters", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def small_run(script: ModuleType) -> object:
    # images of 1, 2 and 3 questions: right 1/1, 1/2, 0/3 -> pooled 2/6
    index = np.array([0, 1, 1, 2, 2, 2])
    right = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    return script.Run(index, right, 3)


def test_cluster_robust_variances_follow_their_formulas(script) -> None:
    run = small_run(script)
    residual = np.array([1 - 1 / 3, 1 - 2 / 3, 0 - 1])  # X_g - n_g p
    cr1 = 3 / 2 * (residual ** 2).sum() / 36
    cr2 = (residual ** 2 / (1 - np.array([1, 2, 3]) / 6)).sum() / 36
    assert script.cr_variance(run.sums(), run.sizes, "CR1") == pytest.approx(cr1)
    assert script.cr_variance(run.sums(), run.sizes, "CR2") == pytest.approx(cr2)
    low, high = script.cr_interval(run, "CR1")
    half = student_t.ppf(0.975, 2) * np.sqrt(cr1)
    assert (low, high) == pytest.approx((1 / 3 - half, 1 / 3 + half))


def test_obuchowski_equals_cr1_with_a_normal_reference(script) -> None:
    """visioneval's clustered McNemar uses CR1's variance of the difference; only its
    reference distribution (chi-square 1) differs from CR1 + t(G-1)."""
    rng = np.random.default_rng(5)
    first, second = script.simulate_pair(rng, 12)
    sums, sizes = second.sums() - first.sums(), first.sizes
    z = abs(sums.sum() / sizes.sum()) / np.sqrt(script.cr_variance(sums, sizes, "CR1"))
    from scipy.stats import norm

    assert script.obuchowski_p(first, second) == pytest.approx(2 * norm.sf(z))
    assert script.cr_paired_p(first, second, "CR1") == pytest.approx(
        2 * student_t.sf(z, 11))
    assert script.cr_paired_p(first, second, "CR1") > script.obuchowski_p(first, second)


def test_bootstrap_intervals_surround_the_estimate_and_are_seeded(script) -> None:
    run = script.simulate_run(np.random.default_rng(3), 15)
    estimate = run.right.mean()
    for method in (script.wild_interval, script.cluster_t_interval):
        low, high = method(run, np.random.default_rng(1), 199)
        assert low < estimate < high
        assert method(run, np.random.default_rng(1), 199) == (low, high)
    low, high = script.visioneval_interval(run)
    assert low < estimate < high


def test_a_run_where_every_answer_is_right_gives_a_point_not_a_failure(script) -> None:
    run = script.Run(np.array([0, 1, 1]), np.ones(3), 2)
    assert script.cr_interval(run, "CR2") == (1.0, 1.0)
    assert script.wild_interval(run, np.random.default_rng(0), 49) == (1.0, 1.0)
    assert script.cluster_t_interval(run, np.random.default_rng(0), 49) == (1.0, 1.0)


def test_tiny_cells_give_every_method_a_share_and_the_fewest_images_read_right(
        script) -> None:
    coverage = script.coverage_cell(10, 8, seed=1, resamples=49)
    assert set(coverage) == set(script.interval_methods(np.random.default_rng(0)))
    for found in coverage.values():
        assert 0 <= found.share.value <= 1 and found.width > 0
    rejection = script.rejection_cell(10, 8, seed=1, resamples=49)
    assert set(rejection) == set(script.paired_tests(np.random.default_rng(0)))
    share = script.Share
    shares = {10: share(0.90, 0.01), 20: share(0.95, 0.01), 50: share(0.97, 0.01),
              200: share(0.95, 0.01)}
    assert script.smallest_holding(shares, script.BAND) == "200"
    shares[50] = share(0.955, 0.01)
    assert script.smallest_holding(shares, script.BAND) == "20"
    shares[200] = share(0.93, 0.01)
    assert script.smallest_holding(shares, script.BAND) == "over 200"
