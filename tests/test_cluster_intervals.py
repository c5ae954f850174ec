"""Cluster bootstrap intervals and clustered paired tests (stats.bootstrap, stats.paired):
samples that share an image resample together."""

from __future__ import annotations

import numpy as np
import pytest

from visioneval.stats.bootstrap import Outcomes, mean_statistic, replicates, summaries
from visioneval.stats.paired import (
    WILD_CLUSTER,
    PairedCollector,
    PairedRow,
    mcnemar,
    paired,
    wild_cluster_test,
)


def outcomes(values: list[float], clusters: list[str] | None) -> Outcomes:
    kept = Outcomes(1)
    for i, value in enumerate(values):
        kept.add(f"sample-{i}", (value,), None if clusters is None else clusters[i])
    return kept


def correlated(images: int, per_image: int, seed: int) -> tuple[list[float], list[str]]:
    """Answers right together within an image: each image's questions share one coin."""
    rng = np.random.default_rng(seed)
    values, keys = [], []
    for image in range(images):
        right = float(rng.random() < 0.6)
        for _ in range(per_image):
            values.append(right)
            keys.append(f"image-{image}")
    return values, keys


def test_every_sample_its_own_cluster_gives_the_plain_interval_exactly() -> None:
    values = [float(i % 3 == 0) for i in range(40)]
    plain = outcomes(values, None)
    own = outcomes(values, [f"image-{i}" for i in range(40)])
    clusters = own.clusters()
    assert clusters.singletons and clusters.count == 40
    a = summaries(plain.matrix(), mean_statistic, ("accuracy",))
    b = summaries(own.matrix(), mean_statistic, ("accuracy",), clusters)
    assert a["accuracy"]["ci95"] == b["accuracy"]["ci95"]
    assert a["accuracy"]["se"] == b["accuracy"]["se"]
    assert b["accuracy"]["n_clusters"] == 40


def test_shared_images_widen_the_interval() -> None:
    values, keys = correlated(30, 4, seed=3)
    naive = summaries(outcomes(values, None).matrix(), mean_statistic, ("accuracy",))
    kept = outcomes(values, keys)
    clustered = summaries(kept.matrix(), mean_statistic, ("accuracy",), kept.clusters())
    assert clustered["accuracy"]["clusters"] == "image"
    assert clustered["accuracy"]["n_clusters"] == 30
    # Four copies of each answer: the design effect is 4, the standard error twice the naive.
    ratio = clustered["accuracy"]["se"] / naive["accuracy"]["se"]
    assert 1.6 < ratio < 2.4


def test_a_resample_holds_whole_clusters() -> None:
    # Cluster a holds two rows of 1, cluster b one row of 0: a resample's mean is 0, 2/3,
    # 4/5... never 1/2 (which would need one row of a without the other).
    kept = outcomes([1.0, 1.0, 0.0], ["a", "a", "b"])
    found = replicates(kept.matrix(), mean_statistic, resamples=200,
                       clusters=kept.clusters())[:, 0]
    assert set(np.round(found, 6)) <= {0.0, round(2 / 3, 6), 1.0}
    assert 0.5 not in found


def test_the_order_of_the_samples_does_not_change_the_clustered_interval() -> None:
    values, keys = correlated(25, 3, seed=5)
    forward = outcomes(values, keys)
    backward = Outcomes(1)
    for i in reversed(range(len(values))):
        backward.add(f"sample-{i}", (values[i],), keys[i])
    a = summaries(forward.matrix(), mean_statistic, ("m",), forward.clusters())
    b = summaries(backward.matrix(), mean_statistic, ("m",), backward.clusters())
    assert a == b


def test_one_cluster_has_no_interval() -> None:
    kept = outcomes([1.0, 0.0, 1.0], ["a", "a", "a"])
    found = summaries(kept.matrix(), mean_statistic, ("m",), kept.clusters())
    assert found["m"] == {"unavailable": "1 image: no clustered interval"}


def test_only_keeps_each_rows_cluster() -> None:
    kept = Outcomes(1)
    for i, key in enumerate(["a", "a", "b", "c"]):
        kept.add(f"sample-{i}", (float(i),), key)
    matrix = kept.matrix()[:, 0]
    wanted = kept.digests()[np.isin(matrix, (0.0, 1.0, 2.0))]  # the rows of a, a and b
    narrowed = kept.only(wanted)
    clusters = narrowed.clusters()
    assert len(narrowed) == 3 and clusters.count == 2
    values = narrowed.matrix()[:, 0]
    same = clusters.index[values == 0.0][0] == clusters.index[values == 1.0][0]
    assert same and clusters.index[values == 2.0][0] != clusters.index[values == 0.0][0]


def test_the_clustered_test_is_less_sure_than_the_exact_test_on_clustered_pairs() -> None:
    rng = np.random.default_rng(11)
    shift = rng.random(20) < 0.3  # in these images only the second run is right
    kept = Outcomes(2)
    for i in range(100):
        kept.add(f"sample-{i}", (0.0, float(shift[i // 5])), f"image-{i // 5}")
    rows, clusters = kept.matrix(), kept.clusters()
    exact = mcnemar(rows[:, 0], rows[:, 1], "m")
    clustered = wild_cluster_test(rows[:, 0], rows[:, 1], clusters, "m")
    assert clustered.test == WILD_CLUSTER
    assert clustered.difference == exact.difference
    assert clustered.p_value is not None and exact.p_value is not None
    assert clustered.p_value > exact.p_value


def test_paired_uses_the_clusters_the_rows_carry() -> None:
    first, second = PairedCollector(), PairedCollector()
    for image in range(12):
        for question in range(3):
            sid = f"img{image}/q{question}"
            first.add(sid, {"exact match": PairedRow("correct", (0.0,), f"img{image}")})
            second.add(sid, {"exact match": PairedRow(
                "correct", (float(image % 2 == 0),), f"img{image}")})
    results, unpaired = paired(first, second)
    assert not unpaired
    assert results[0].test == WILD_CLUSTER
    assert "12 images" in results[0].detail
    # The same pairs, each its own cluster: McNemar's exact test as before.
    lone_a, lone_b = PairedCollector(), PairedCollector()
    for image in range(12):
        lone_a.add(f"img{image}", {"exact match": PairedRow("correct", (0.0,))})
        lone_b.add(f"img{image}", {"exact match": PairedRow(
            "correct", (float(image % 2 == 0),))})
    assert paired(lone_a, lone_b)[0][0].test == "McNemar exact"


def test_a_macro_f1_difference_over_clusters_says_so() -> None:
    first, second = PairedCollector(), PairedCollector()
    for image in range(10):
        for question in range(2):
            sid = f"img{image}/q{question}"
            hit = float(image % 3 == 0)
            first.add(sid, {"macro F1": PairedRow("macro_f1", (hit, 0.0, 1 - hit, 0.0, 0.0, 0.0),
                                                  f"img{image}")})
            second.add(sid, {"macro F1": PairedRow("macro_f1", (1.0, 0.0, 0.0, 0.0, 0.0, 0.0),
                                                   f"img{image}")})
    results, _ = paired(first, second)
    assert results[0].test == "paired bootstrap over images"
    assert results[0].interval is not None


# -- the benchmarks' pooled figures -------------------------------------------------------------


def _salbench_records(configs: list[str], images: int, right: set[int]) -> list:
    """Each config asks about the same `images` scenes; the answer is right (color) on the
    scenes in `right`, wrong (size) elsewhere, in every task alike."""
    from visioneval.benchmarks.salbench.benchmark import ScoringOnly
    from visioneval.benchmarks.salbench.options import SalBenchOptions
    from visioneval.core.records import Record, Response, Sample

    bench = ScoringOnly(SalBenchOptions(configs=configs))
    out = []
    for config in configs:
        for image in range(images):
            text = "color" if image in right else "size"
            sample = Sample(id=f"{config}/scene{image}", group=config, messages=(),
                            target="color", metadata={"config": config, "image_id":
                                                      f"scene{image}", "row": image,
                                                      "prompt": "paper"})
            parsed, scores = bench.score(sample, text)
            out.append(Record(id=sample.id, group=config, target="color",
                              response=Response(text=text), parsed=parsed, scores=scores,
                              metadata=sample.metadata))
    return bench, out


def test_salbench_pools_its_tasks_over_scenes() -> None:
    right = {i for i in range(30) if i % 3 != 0}
    bench, records = _salbench_records(["P3", "P3_box", "P3_box_img"], 30, right)
    metrics = bench.summarize(records)
    pooled = metrics["P3"]["pooled_tasks"]
    assert pooled == metrics["P3_box_img"]["pooled_tasks"]
    assert pooled["configs"] == ["P3", "P3_box", "P3_box_img"]
    assert (pooled["n"], pooled["n_images"]) == (90, 30)
    assert pooled["exact_match"] == pytest.approx(20 / 30)
    assert pooled["exact_match_ci95_clusters"] == "image"
    assert pooled["exact_match_ci95_n_clusters"] == 30
    # The three tasks repeat each scene's answer: the pooled interval is as wide as one
    # task's (30 scenes), not as a 90-scene run's.
    one = metrics["P3"]["strict"]
    assert "exact_match_ci95_clusters" not in one  # each scene once: the plain bootstrap
    width = pooled["exact_match_ci95"][1] - pooled["exact_match_ci95"][0]
    single = one["exact_match_ci95"][1] - one["exact_match_ci95"][0]
    assert width == pytest.approx(single, rel=0.25)
    assert pooled["macro_f1_ci95_n_clusters"] == 30


def test_salbench_one_task_has_no_pool() -> None:
    bench, records = _salbench_records(["P3", "O3"], 10, {1, 2, 3})
    metrics = bench.summarize(records)
    assert "pooled_tasks" not in metrics["P3"] and "pooled_tasks" not in metrics["O3"]


def test_illusionbench_pools_shape_and_scene_over_images() -> None:
    from pathlib import Path

    from visioneval.benchmarks.illusionbench.benchmark import (
        IllusionBench,
        IllusionBenchOptions,
    )
    from visioneval.core.records import Record, Response, Sample

    bench = IllusionBench(IllusionBenchOptions(subsets=["ICON"], protocol="lmms-strict"),
                          Path("."), {})
    records = []
    for image in range(24):
        good = image % 4 != 0  # both answers right, or both wrong, per image
        for task, label in (("shape", "animal"), ("scene", "Ocean")):
            text = f"Answer: {label}" if good else "Answer: nothing"
            sample = Sample(id=f"ICON/img{image}/{task}/lmms", group="ICON", messages=(),
                            target={"shape": "animal", "scene": "Ocean"},
                            metadata={"task": task, "family": "lmms", "difficulty": "Easy",
                                      "image_name": f"img{image}"})
            parsed, scores = bench.score(sample, text)
            records.append(Record(id=sample.id, group="ICON", target=sample.target,
                                  response=Response(text=text), parsed=parsed,
                                  scores=scores, metadata=sample.metadata))
    block = bench.summarize(records)["lmms-strict"]["ICON"]
    pooled = block["pooled"]
    assert (pooled["n"], pooled["n_images"]) == (48, 24)
    assert pooled["recall"] == pytest.approx(18 / 24)
    assert pooled["recall_ci95_clusters"] == "image"
    assert "recall_ci95_clusters" not in block["shape"]
    width = pooled["recall_ci95"][1] - pooled["recall_ci95"][0]
    shape = block["shape"]["recall_ci95"][1] - block["shape"]["recall_ci95"][0]
    assert width == pytest.approx(shape, rel=0.25)  # 24 images, not 48 answers


def test_salbench_paired_rows_carry_the_scene() -> None:
    from visioneval.core import registry

    bench, records = _salbench_records(["P3", "P3_box"], 2, {0})
    definition = registry.definition("salbench")
    rows = [definition.paired_rows(r) for r in records]
    assert rows[0]["P3 exact match"].cluster == "P3/scene0"
    assert rows[2]["P3_box exact match"].cluster == "P3/scene0"  # the same scene, boxed
    assert rows[1]["P3 macro F1"].cluster == "P3/scene1"


def test_the_terminal_and_report_show_the_pooled_figures() -> None:
    from rich.console import Console

    from visioneval.benchmarks.salbench import tables

    bench, records = _salbench_records(["O3", "O3_box"], 12, {0, 1, 2, 3, 4, 5})
    metrics = bench.summarize(records)
    rows = tables.pooled_rows(metrics)
    assert len(rows) == 1 and rows[0][:4] == ["O3", "D+R", "24", "12"]
    assert rows[0][4] == "50.0"
    console = Console(record=True, width=80)
    tables.show(metrics, {"model": "m", "shots": 0}, console)
    assert "Tasks pooled per image set" in console.export_text()


# -- pooled paired rows: compare and the variants summary ----------------------------------------


def _paired_collector(records: list) -> PairedCollector:
    from visioneval.core import registry

    definition = registry.definition("salbench")
    collector = PairedCollector()
    for record in records:
        collector.add(record.id, definition.paired_rows(record))
    return collector


def test_salbench_pools_its_tasks_in_paired_tests_over_scenes() -> None:
    # Run A right on scenes 0-19, run B on all 30, every task alike: 30 discordant pairs,
    # but only 10 discordant scenes.
    _, first = _salbench_records(["P3", "P3_box", "P3_box_img"], 30, set(range(20)))
    _, second = _salbench_records(["P3", "P3_box", "P3_box_img"], 30, set(range(30)))
    results, unpaired = paired(_paired_collector(first), _paired_collector(second))
    assert not unpaired
    found = {r.key: r for r in results}
    pooled = found["P3 tasks pooled exact match"]
    assert pooled.test == WILD_CLUSTER and "30 images" in pooled.detail
    assert found["P3 exact match"].test == "McNemar exact"  # one answer per scene
    # The same answers taken as 90 independent pairs would be far surer.
    a = np.array([float(i in range(20)) for _ in range(3) for i in range(30)])
    b = np.ones(90)
    plain = mcnemar(a, b, "x")
    assert pooled.p_value is not None and plain.p_value is not None
    assert pooled.p_value > 5 * plain.p_value


def test_a_pool_of_one_task_is_left_out() -> None:
    _, first = _salbench_records(["P3", "O3"], 10, {1, 2, 3})
    _, second = _salbench_records(["P3", "O3"], 10, {4, 5, 6})
    keys = {r.key for r in paired(_paired_collector(first), _paired_collector(second))[0]}
    assert "P3 exact match" in keys and "O3 macro F1" in keys
    assert not any("pooled" in key for key in keys)


def test_the_variants_summary_resamples_a_pooled_metric_by_scene() -> None:
    from visioneval.core import registry
    from visioneval.core.variant_ids import VARIANT, VARIANT_OF, variant_group, variant_id
    from visioneval.variants.kinds import Blind
    from visioneval.variants.summary import VariantCollector

    configs = ["P3", "P3_box", "P3_box_img"]
    _, stored = _salbench_records(configs, 30, set(range(20)))
    _, blind = _salbench_records(configs, 30, set(range(5)))
    collector = VariantCollector([Blind()], registry.definition("salbench"))
    for record in stored:
        collector.add(record)
    for record in blind:
        collector.add(record.model_copy(update={
            "id": variant_id(record.id, "blind"), "group": variant_group(record.group, "blind"),
            "metadata": record.metadata | {VARIANT: "blind", VARIANT_OF: record.id}}))
    metrics = {m.metric: m for m in collector.result().variants[0].metrics}
    pooled = metrics["P3 tasks pooled exact match"]
    assert pooled.n == 90
    assert pooled.original is not None and pooled.variant is not None
    assert (pooled.original.ci95_clusters, pooled.original.ci95_n_clusters) == ("image", 30)
    assert pooled.variant.ci95_n_clusters == 30
    assert pooled.versus_original is not None
    assert pooled.versus_original.test == WILD_CLUSTER
    # As wide as one task's interval over the same 30 scenes, not a 90-scene one.
    one = metrics["P3 exact match"].original
    assert one is not None and one.ci95_clusters is None and one.ci95 and pooled.original.ci95
    assert pooled.original.ci95[1] - pooled.original.ci95[0] == pytest.approx(
        one.ci95[1] - one.ci95[0], rel=0.25)
    assert pooled.chance is not None and pooled.chance.ci95_clusters == "image"


def test_illusionbench_pools_both_tasks_in_paired_tests_only_where_both_were_asked() -> None:
    from visioneval.core import registry
    from visioneval.core.records import Record, Response

    definition = registry.definition("illusionbench")

    def collector(right: set[int], tasks: tuple[str, ...]) -> PairedCollector:
        out = PairedCollector()
        for image in range(16):
            for task in tasks:
                record = Record(id=f"ICON/img{image}/{task}/original", group="ICON",
                                target={}, response=Response(text="x"),
                                scores={"original": {"correct": float(image in right)}},
                                metadata={"task": task, "image_name": f"img{image}",
                                          "family": "original", "subset": "ICON"})
                out.add(record.id, definition.paired_rows(record))
        return out

    both = ("shape", "scene")
    results = {r.key: r for r in paired(collector(set(range(8)), both),
                                        collector(set(range(16)), both))[0]}
    assert results["ICON both tasks recall (original)"].test == WILD_CLUSTER
    assert "16 images" in results["ICON both tasks recall (original)"].detail
    assert results["ICON shape recall (original)"].test == "McNemar exact"
    shape_only = paired(collector(set(range(8)), ("shape",)),
                        collector(set(range(16)), ("shape",)))[0]
    assert [r.key for r in shape_only] == ["ICON shape recall (original)"]


def test_one_cluster_has_no_clustered_test_and_no_interval() -> None:
    from visioneval.stats.bootstrap import Clusters
    from visioneval.stats.paired import bootstrap_difference, interval_of, paired_test

    a = np.array([[0.0], [0.0], [1.0], [0.0]])
    b = np.array([[1.0], [1.0], [1.0], [0.0]])
    one = Clusters("image", np.zeros(4, dtype=np.intp), 1)
    test = paired_test("correct", a, b, "x", clusters=one)
    assert test.p_value is None and not test.significant and "one image" in test.detail
    assert interval_of("correct", a, one) is None
    boot = bootstrap_difference("correct", a, b, "x", one)
    assert boot.interval is None and not boot.significant
    # A pooled metric whose rows all show one image is left out of the tests.
    first, second = PairedCollector(), PairedCollector()
    for i in range(4):
        first.add(f"q{i}", {"pooled": PairedRow("correct", (a[i, 0],), "img", pooled=True)})
        second.add(f"q{i}", {"pooled": PairedRow("correct", (b[i, 0],), "img", pooled=True)})
    assert first.metrics() == [] and paired(first, second) == ([], [])


def test_the_same_shift_in_every_cluster_is_a_sign_test_over_clusters_not_p_zero() -> None:
    from visioneval.stats.bootstrap import Clusters

    # Two images, two pairs each: the second run is right on one more answer per image.
    a = np.array([0.0, 1.0, 0.0, 1.0])
    b = np.array([1.0, 1.0, 1.0, 1.0])
    two = Clusters("image", np.array([0, 0, 1, 1], dtype=np.intp), 2)
    found = wild_cluster_test(a, b, two, "x")
    assert found.p_value == pytest.approx(0.5)  # 2 images up, 0 down
    assert not found.significant and "sign test over images" in found.detail
    assert found.p_value >= mcnemar(a, b, "x").p_value


def test_the_chunking_of_resamples_does_not_change_an_interval(monkeypatch) -> None:
    from visioneval.stats import bootstrap

    rng = np.random.default_rng(2)
    rows = (rng.random((300, 1)) < 0.6).astype(np.float64)
    clusters = outcomes(list(rows[:, 0]), [f"img{i // 3}" for i in range(300)]).clusters()
    whole = [summaries(rows, mean_statistic, ("x",), c) for c in (None, clusters)]
    monkeypatch.setattr(bootstrap, "CHUNK_CELLS", 7 * 300)  # 7 resamples a chunk
    assert bootstrap._chunk(300) == 7
    assert [summaries(rows, mean_statistic, ("x",), c) for c in (None, clusters)] == whole
