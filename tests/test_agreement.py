"""Krippendorff's alpha and its bootstrap interval (stats.agreement): the published values of
Krippendorff's own example, the `krippendorff` package's values on random data with missing
ratings, known agreement recovered from simulated raters, and the judge-against-human
summary."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy.stats import rankdata

from visioneval.stats.agreement import (
    Pairable,
    against_reference,
    agreement,
    krippendorff_alpha,
    leave_one_out,
    resample_counts,
)

NA = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four
# observers, twelve units, values 1-5, missing data. Published: ordinal .815, interval .849.
TEXTBOOK = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, 3],
    [NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NA],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA],
])


def package_alpha(ratings: np.ndarray, level: str) -> float:
    return float(krippendorff.alpha(reliability_data=ratings, level_of_measurement=level))


def test_krippendorff_2011_example_interval_and_ordinal():
    assert round(krippendorff_alpha(TEXTBOOK, "interval"), 3) == 0.849
    assert round(krippendorff_alpha(TEXTBOOK, "ordinal"), 3) == 0.815
    found = agreement(TEXTBOOK, "ordinal")
    # Units 11 and 12 are coded once or twice: unit 12 (one value) is not pairable.
    assert (found.units, found.raters, found.level) == (11, 4, "ordinal")
    assert round(found.alpha, 3) == 0.815


@pytest.mark.parametrize("level", ["interval", "ordinal"])
def test_equals_the_krippendorff_package_with_missing_ratings(level):
    rng = np.random.default_rng(7)
    compared = 0
    for trial in range(120):
        raters, units = int(rng.integers(2, 7)), int(rng.integers(3, 40))
        ratings = (rng.integers(0, 11, (raters, units)).astype(float) if trial % 2
                   else rng.uniform(0, 10, (raters, units)))
        ratings[rng.random(ratings.shape) < 0.35] = NA
        if ((~np.isnan(ratings)).sum(axis=0) >= 2).sum() < 2:
            continue
        assert krippendorff_alpha(ratings, level) == pytest.approx(
            package_alpha(ratings, level), abs=1e-12)
        compared += 1
    assert compared > 100


@pytest.mark.parametrize("level", ["interval", "ordinal"])
def test_each_bootstrap_resample_equals_the_package_on_the_resampled_units(level):
    rng = np.random.default_rng(3)
    ratings = np.round(rng.uniform(0, 10, (4, 25)), 1)
    ratings[rng.random(ratings.shape) < 0.2] = NA
    units = Pairable(ratings, level)
    kept = ratings[:, (~np.isnan(ratings)).sum(axis=0) >= 2]
    counts = resample_counts(np.random.default_rng(0), units.units, 30)
    ours = units.alphas(counts)
    for row, alpha in zip(counts, ours, strict=True):
        columns = np.repeat(np.arange(units.units), row.astype(int))
        assert alpha == pytest.approx(package_alpha(kept[:, columns], level), abs=1e-12)


@pytest.mark.parametrize("level", ["interval", "ordinal"])
def test_identical_raters_agree_perfectly(level):
    rng = np.random.default_rng(1)
    one = rng.integers(0, 11, 40).astype(float)
    ratings = np.stack([one, one, one])
    ratings[0, :5] = NA  # a missing rating does not make two raters disagree
    found = agreement(ratings, level)
    assert found.alpha == pytest.approx(1.0, abs=1e-12)
    assert found.ci95 == pytest.approx((1.0, 1.0), abs=1e-12)
    assert found.unavailable is None


def test_independent_raters_agree_near_zero_and_the_interval_covers_it():
    covered = 0
    alphas = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        found = agreement(rng.integers(0, 11, (3, 80)).astype(float), resamples=400, seed=seed)
        alphas.append(found.alpha)
        covered += found.ci95[0] <= 0 <= found.ci95[1]
    assert abs(np.mean(alphas)) < 0.03
    assert covered >= 34  # 95% intervals: 38 expected of 40


def test_ordinal_alpha_depends_on_the_order_only():
    rng = np.random.default_rng(5)
    ratings = rng.integers(1, 8, (3, 30)).astype(float)
    stretched = np.exp(ratings)  # same order, other distances
    assert krippendorff_alpha(stretched, "ordinal") == pytest.approx(
        krippendorff_alpha(ratings, "ordinal"), abs=1e-12)
    assert krippendorff_alpha(stretched, "interval") != pytest.approx(
        krippendorff_alpha(ratings, "interval"), abs=1e-3)


def test_a_unit_rated_once_is_left_out():
    rng = np.random.default_rng(2)
    ratings = rng.integers(0, 11, (2, 20)).astype(float)
    with_single = np.concatenate([ratings, [[7.0], [NA]]], axis=1)
    assert krippendorff_alpha(with_single) == krippendorff_alpha(ratings)
    assert agreement(with_single).units == 20


def test_fewer_than_two_pairable_units_has_no_alpha():
    found = agreement(np.array([[3.0, 4.0, NA], [5.0, NA, 2.0]]))
    assert found.alpha is None and found.ci95 is None
    assert found.units == 1
    assert "1 case rated at least twice" in found.unavailable
    assert krippendorff_alpha(np.array([[3.0, 4.0, NA], [5.0, NA, 2.0]])) is None


def test_ratings_without_variation_have_no_alpha():
    found = agreement(np.full((3, 10), 7.0), "ordinal")
    assert found.alpha is None and found.ci95 is None
    assert found.units == 10
    assert "every rating is 7" in found.unavailable


def test_the_interval_is_seeded():
    rng = np.random.default_rng(9)
    ratings = np.round(rng.normal(5, 2, 50) + rng.normal(0, 1, (2, 50)))
    first, again, other = (agreement(ratings, seed=s) for s in (4, 4, 5))
    assert first == again
    assert first.ci95 != other.ci95
    assert first.ci95[0] < first.alpha < first.ci95[1]


def test_no_interval_when_most_resamples_have_no_variation():
    """Two units, each rated alike by both raters: a resample drawing one unit twice has a
    single value and no alpha (half of them, by chance more or fewer)."""
    ratings = np.array([[5.0, 7.0], [5.0, 7.0]])
    outcomes = [agreement(ratings, resamples=21, seed=seed) for seed in range(12)]
    assert all(found.alpha == pytest.approx(1.0) for found in outcomes)
    refused = [found for found in outcomes if found.ci95 is None]
    assert refused and len(refused) < len(outcomes)
    for found in refused:
        dropped = int(found.unavailable.split(" of ")[0])
        assert dropped > 10 and "21 bootstrap resamples had no variation" in found.unavailable
    for found in outcomes:
        if found.ci95 is not None:
            assert found.ci95 == pytest.approx((1.0, 1.0)) and found.unavailable is None


def test_bad_ratings_are_refused():
    with pytest.raises(ValueError, match="raters x units"):
        krippendorff_alpha(np.arange(5.0))
    with pytest.raises(ValueError, match="finite"):
        krippendorff_alpha(np.array([[1.0, np.inf], [1.0, 2.0]]))


@pytest.mark.slow
@pytest.mark.parametrize(("raters", "units"), [(3, 60), (2, 30), (5, 15)])
def test_interval_covers_a_simulated_true_agreement(raters, units):
    """Raters = true score + independent error: alpha (interval) is var(true) / (var(true) +
    var(error)), here 4 / 6.25 = 0.64. Its interval should hold it in about 95% of samples:
    studentized under 60 cases (the percentile interval held it in 84% at 5 x 15), percentile
    from 60. Over these 300 samples the standard error of a 95% coverage is 1.3 points."""
    true_alpha = 4 / (4 + 2.25)
    covered = 0
    trials = 300
    for seed in range(trials):
        rng = np.random.default_rng(1000 + seed)
        truth = rng.normal(0, 2, units)
        ratings = truth + rng.normal(0, 1.5, (raters, units))
        low, high = agreement(ratings, seed=seed).ci95
        covered += low <= true_alpha <= high
    assert 0.92 <= covered / trials <= 0.985


@pytest.mark.parametrize("level", ["interval", "ordinal"])
def test_leaving_a_drawn_case_out_equals_the_package_without_it(level):
    rng = np.random.default_rng(11)
    ratings = np.round(rng.normal(5, 2, 9) + rng.normal(0, 1.5, (3, 9)))
    ratings[rng.random(ratings.shape) < 0.2] = NA
    units = Pairable(ratings, level)
    kept = ratings[:, (~np.isnan(ratings)).sum(axis=0) >= 2]
    counts = resample_counts(np.random.default_rng(1), units.units, 6)
    found = leave_one_out(units, counts)
    for row, alphas in zip(counts, found, strict=True):
        for unit, alpha in enumerate(alphas):
            if row[unit] == 0:
                assert np.isnan(alpha)
                continue
            less = row.copy()
            less[unit] -= 1
            columns = np.repeat(np.arange(units.units), less.astype(int))
            assert alpha == pytest.approx(package_alpha(kept[:, columns], level), abs=1e-12)


def test_the_studentized_interval_by_hand_with_the_package():
    """Under 60 cases: alpha - t quantiles x the jackknife standard error, each resample's t
    from its own jackknife, every alpha here from the `krippendorff` package."""
    ratings = np.array([[3.0, 5, 6, 2, 8, 7, 4, 9, 5, 6],
                        [4.0, 5, 7, 3, 8, 5, 4, 8, NA, 7],
                        [3.0, 6, 6, 1, 9, 6, 5, 9, 4, NA]])
    resamples = 40
    found = agreement(ratings, resamples=resamples, seed=3)
    n = 10
    alpha = package_alpha(ratings, "interval")

    def jackknife_se(columns: np.ndarray) -> float:
        out = [package_alpha(ratings[:, np.delete(columns, i)], "interval") for i in range(n)]
        return float(np.sqrt((n - 1) / n * np.sum((np.array(out) - np.mean(out)) ** 2)))

    se = jackknife_se(np.arange(n))
    counts = resample_counts(np.random.default_rng(3), n, resamples)
    t = []
    for row in counts:
        columns = np.repeat(np.arange(n), row.astype(int))
        t.append((package_alpha(ratings[:, columns], "interval") - alpha) / jackknife_se(columns))
    low_t, high_t = np.quantile(t, [0.025, 0.975])
    assert found.alpha == pytest.approx(alpha, abs=1e-12)
    assert found.ci95 == pytest.approx((alpha - high_t * se, min(alpha - low_t * se, 1.0)),
                                       abs=1e-9)


def test_judge_against_identical_human_scores():
    scores = [2.0, 5.0, 7.0, 7.5, 9.0, 3.0]
    found = against_reference(scores, scores)
    assert found.n == 6
    assert found.alpha == pytest.approx(1.0)
    assert found.spearman == pytest.approx(1.0)
    assert (found.mean_abs_diff, found.mean_diff, found.unavailable) == (0.0, 0.0, None)


def test_judge_against_human_scores_known_values():
    judge = [1.0, 2.0, 3.0, 4.0, 5.0]
    human = [2.0, 1.0, 4.0, 3.0, 5.0]
    found = against_reference(judge, human)
    assert found.spearman == pytest.approx(0.8)  # 1 - 6 * 4 / (5 * 24)
    assert 0 < found.spearman_p < 1
    assert found.alpha == pytest.approx(package_alpha(np.array([judge, human]), "interval"))
    assert found.mean_diff == pytest.approx(0.0)
    assert found.mean_abs_diff == pytest.approx(0.8)


def test_spearman_with_ties_is_the_correlation_of_mid_ranks():
    judge = [7.0, 7.0, 5.0, 9.0, 3.0, 7.0, NA]
    human = [6.5, 8.0, 5.0, 8.0, 2.0, 6.0, 4.0]
    found = against_reference(judge, human)
    ranks = [rankdata(column[:6]) for column in (judge, human)]
    assert found.n == 6
    assert found.spearman == pytest.approx(np.corrcoef(*ranks)[0, 1])


def test_a_lenient_judge_shows_in_the_mean_difference():
    human = [3.0, 4.0, 6.0, 7.0, 8.0, 5.0]
    judge = [h + 1 for h in human]
    found = against_reference(judge, human)
    assert found.mean_diff == pytest.approx(1.0) and found.mean_abs_diff == pytest.approx(1.0)
    assert found.spearman == pytest.approx(1.0)
    assert found.alpha < 1  # interval alpha counts the offset as disagreement


def test_pairs_with_a_missing_score_are_left_out():
    found = against_reference([1.0, NA, 3.0, 4.0, 6.0], [1.0, 2.0, NA, 4.0, 6.0])
    assert found.n == 3
    assert found.mean_abs_diff == 0.0


def test_too_few_pairs_give_no_statistics():
    found = against_reference([1.0, 2.0], [1.0, 3.0])
    assert found.n == 2
    assert (found.alpha, found.spearman, found.mean_diff, found.mean_abs_diff) == (
        None, None, None, None)
    assert "2 cases scored by both" in found.unavailable


def test_a_constant_judge_has_no_rank_correlation():
    found = against_reference([6.0, 6.0, 6.0, 6.0], [4.0, 6.0, 7.0, 9.0])
    assert found.spearman is None and found.spearman_p is None
    assert "judge's scores are all 6: no rank correlation" in found.unavailable
    assert found.alpha is not None and found.mean_diff == pytest.approx(-0.5)
    both = against_reference([6.0, 6.0, 6.0], [6.0, 6.0, 6.0])
    assert both.alpha is None and both.spearman is None
    assert "every rating is 6" in both.unavailable
    assert "the judge's scores are all 6 and the human scores are all 6" in both.unavailable


def test_judge_and_human_lists_must_line_up():
    with pytest.raises(ValueError, match="one length"):
        against_reference([1.0, 2.0, 3.0], [1.0, 2.0])
