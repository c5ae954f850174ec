"""Intervals and paired tests over few images (stats.bootstrap, stats.paired): a clustered
share's interval is the cluster bootstrap-t, a clustered 0/1 paired test the wild cluster
bootstrap-t, and below the counts they were measured at (measure/few_clusters.py) the
result carries a note."""

from __future__ import annotations

import numpy as np
from rich.console import Console

from visioneval.core.headline import from_block
from visioneval.report.paired import PairedComparison, show
from visioneval.stats.bootstrap import (
    HOLDS_FROM,
    Clusters,
    Outcomes,
    mean_statistic,
    summaries,
)
from visioneval.stats.paired import (
    WILD_CLUSTER,
    WILD_HOLDS_FROM,
    PairedCollector,
    PairedRow,
    paired,
    wild_cluster_test,
)


def skewed(images: int = 12) -> Outcomes:
    """One large image all wrong, the rest small and mostly right: the share's resampled
    distribution has a long low tail."""
    kept = Outcomes(1)
    for question in range(12):
        kept.add(f"big/{question}", (0.0,), "big")
    for image in range(images - 1):
        for question in range(1 + image % 3):
            kept.add(f"img{image}/{question}", (float(image % 5 != 0),), f"img{image}")
    return kept


def test_a_clustered_share_gets_the_bootstrap_t_and_it_follows_the_skew() -> None:
    kept = skewed()
    rows, clusters = kept.matrix(), kept.clusters()
    share = float(rows.mean())
    studentized = summaries(rows, mean_statistic, ("m",), clusters)["m"]
    percentile = summaries(rows, mean_statistic, ("m",), clusters, shares=())["m"]
    assert studentized["method"] == "bootstrap-t" and percentile["method"] == "percentile"
    assert studentized["se"] == percentile["se"]  # the same resamples
    low, high = studentized["ci95"]
    assert 0.0 <= low < share < high <= 1.0
    # The big all-wrong image makes the low side uncertain: the bootstrap-t reaches lower.
    assert low < percentile["ci95"][0] - 0.02


def test_the_bootstrap_t_is_reproducible_and_independent_of_the_row_order() -> None:
    kept = skewed()
    reversed_rows = Outcomes(1)
    rows = list(zip(kept.digests(), kept.matrix()[:, 0], strict=True))
    assert len(rows) == len(kept)
    forward = summaries(kept.matrix(), mean_statistic, ("m",), kept.clusters())
    # The same samples added in the opposite order.
    names = [(f"big/{q}", 0.0, "big") for q in range(12)] + [
        (f"img{i}/{q}", float(i % 5 != 0), f"img{i}") for i in range(11) for q in range(1 + i % 3)]
    for sample_id, value, image in reversed(names):
        reversed_rows.add(sample_id, (value,), image)
    backward = summaries(reversed_rows.matrix(), mean_statistic, ("m",),
                         reversed_rows.clusters())
    assert forward == backward
    assert summaries(kept.matrix(), mean_statistic, ("m",), kept.clusters()) == forward


def test_over_single_answer_images_the_interval_stays_the_plain_percentile() -> None:
    rows = (np.arange(30) % 3 == 0).astype(np.float64)[:, None]
    own = Clusters("image", np.arange(30, dtype=np.intp), 30)
    plain = summaries(rows, mean_statistic, ("m",))["m"]
    clustered = summaries(rows, mean_statistic, ("m",), own)["m"]
    assert clustered["method"] == "percentile" and clustered["ci95"] == plain["ci95"]


def _null_pair(rng: np.random.Generator, images: int) -> tuple[np.ndarray, np.ndarray,
                                                                Clusters]:
    """Two runs with equal true accuracy, each image with its own chance per run."""
    sizes = rng.integers(1, 6, size=images)
    index = np.repeat(np.arange(images), sizes).astype(np.intp)
    chances = rng.beta(1.4, 0.6, size=(2, images))
    a = (rng.random(len(index)) < chances[0, index]).astype(np.float64)
    b = (rng.random(len(index)) < chances[1, index]).astype(np.float64)
    return a, b, Clusters("image", index, images)


def test_the_wild_test_p_value_is_about_uniform_with_no_difference() -> None:
    rng = np.random.default_rng(7)
    p_values = []
    for i in range(300):
        a, b, clusters = _null_pair(rng, 15)
        found = wild_cluster_test(a, b, clusters, "m", resamples=199, seed=i)
        assert found.p_value is not None
        p_values.append(found.p_value)
    p = np.array(p_values)
    assert 0.01 <= float((p < 0.05).mean()) <= 0.10
    assert 0.40 <= float((p < 0.5).mean()) <= 0.60


def test_the_wild_test_finds_a_clear_difference() -> None:
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 5, size=30)
    index = np.repeat(np.arange(30), sizes).astype(np.intp)
    a = (rng.random(len(index)) < 0.3).astype(np.float64)
    b = (rng.random(len(index)) < 0.85).astype(np.float64)
    found = wild_cluster_test(a, b, Clusters("image", index, 30), "m")
    assert found.test == WILD_CLUSTER and found.significant
    assert found.p_value is not None and found.p_value < 0.01


def _collectors(images: int, order: int = 1) -> tuple[PairedCollector, PairedCollector]:
    first, second = PairedCollector(), PairedCollector()
    ids = [(image, question) for image in range(images) for question in range(3)][::order]
    for image, question in ids:
        sid = f"img{image}/q{question}"
        first.add(sid, {"pooled": PairedRow("correct", (float(question == 0),),
                                            f"img{image}", pooled=True)})
        second.add(sid, {"pooled": PairedRow("correct", (float(image % 2 == 0),),
                                             f"img{image}", pooled=True)})
    return first, second


def test_the_wild_test_is_reproducible_and_independent_of_the_journal_order() -> None:
    forward = paired(*_collectors(14))[0][0]
    backward = paired(*_collectors(14, order=-1))[0][0]
    assert forward.test == WILD_CLUSTER and "14 images" in forward.detail
    assert forward == backward


def test_too_few_images_for_the_test_carry_a_note_the_terminal_shows() -> None:
    few = paired(*_collectors(WILD_HOLDS_FROM - 1))[0][0]
    enough = paired(*_collectors(WILD_HOLDS_FROM))[0][0]
    assert enough.note is None
    assert few.note is not None and f"only {WILD_HOLDS_FROM - 1} images" in few.note
    console = Console(record=True, width=100)
    show([PairedComparison("runs/a", "runs/b", [few])], console)
    text = console.export_text()
    assert f"pooled: {few.note}" in text
    assert all(len(line) <= 100 for line in text.splitlines())


def test_an_interval_over_few_images_carries_a_note() -> None:
    block = {"n": 40, "m": 0.6, "m_ci95": [0.4, 0.8], "m_ci95_clusters": "image",
             "m_ci95_n_clusters": HOLDS_FROM - 1}
    headline = from_block("m", block, "m")
    assert headline.interval_note is not None
    assert f"only {HOLDS_FROM - 1} images" in headline.why
    assert from_block("m", block | {"m_ci95_n_clusters": HOLDS_FROM}, "m").why == ""
    assert from_block("m", {"n": 40, "m": 0.6, "m_ci95": [0.4, 0.8]}, "m").why == ""


def test_the_pooled_tables_note_few_images() -> None:
    from visioneval.benchmarks.illusionbench import tables as illusion
    from visioneval.benchmarks.salbench import tables as salbench

    pooled = {"exact_match_ci95_n_clusters": HOLDS_FROM - 2,
              "exact_match_ci95_clusters": "image"}
    notes = salbench.pooled_notes({"P3": {"pooled_tasks": pooled},
                                   "P3_box": {"pooled_tasks": pooled}})
    assert notes == [f"P3: only {HOLDS_FROM - 2} images: the interval's 95% is measured "
                     f"from {HOLDS_FROM} on"]
    enough = {"recall_ci95_n_clusters": HOLDS_FROM, "recall_ci95_clusters": "image"}
    assert illusion.pooled_notes({"original": {"ICON": {"pooled": enough}}}) == []
