"""The judges' cards: from the records of a `visioneval evaluate` run, each judge's controls
(blind, order, edits), its agreement with itself, with the other judges and with people,
and the panel's score per case when several judges graded.

Records stream through `JudgeChecks.add`, which keeps a few numbers per judge verdict (never
the replies), so memory grows with the cases as metrics.json does, not with the replies."""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from visioneval.core.records import Record
from visioneval.evaluators.controls import BLIND, EDIT, ORDER
from visioneval.evaluators.edits import DETAIL, KINDS, Edit, named
from visioneval.evaluators.human_labels import HumanLabels, shown
from visioneval.evaluators.metrics import (
    RELIABLE,
    TENTATIVE,
    Agreement,
    ControlCheck,
    Difference,
    EvaluatorMetrics,
    HumanCheck,
    HumanLabelsInfo,
    JudgeCard,
    JudgesMetrics,
    JudgeVariation,
    ProbeCheck,
)
from visioneval.evaluators.options import EvaluateOptions
from visioneval.evaluators.rubric import Rubric
from visioneval.evaluators.variation import judge_variation
from visioneval.stats.agreement import against_reference, agreement
from visioneval.stats.binomial import wilson
from visioneval.stats.bootstrap import mean_statistic, summaries

SCORE = "score"  # the weighted score's row beside the dimensions
UNUSED_NAMED = 5  # human scores left out that metrics.json names (all are counted)
IDENTICAL_SHARE = 0.8  # blind: this share of cases scored the same reads as ignoring it
NEGLIGIBLE = 0.05  # blind: an interval within this of 0 (score units) reads as no change
NO_BIAS = 0.1  # order: an interval within this of 0 reads as no position bias
EXAMPLES = 3
POINTS_CAP = 2000  # calibration points kept per check


def reading(alpha: float | None) -> str | None:
    if alpha is None:
        return None
    return "reliable" if alpha >= RELIABLE else "tentative" if alpha >= TENTATIVE \
        else "unreliable"


@dataclass
class Verdict:
    """One judge's result on one case (or on one control of it), in numbers."""

    processed: bool
    score: float | None = None
    passed: bool = False
    threshold: float | None = None
    dimensions: dict[str, float] = field(default_factory=dict)
    samples: list[dict[str, int]] | None = None
    error: str | None = None
    named: bool | None = None  # an edit's control: the judge named the edit
    change: str | None = None

    @classmethod
    def of(cls, record: Record) -> Verdict:
        result = record.parsed.get("result") or {}
        details = result.get("details") or {}
        if result.get("status") != "processed" or result.get("score") is None:
            return cls(False, error=str(details.get("error") or record.response.error
                                        or "no result"))
        dims = {k: float(v["mean"]) for k, v in (details.get("dimensions") or {}).items()}
        return cls(True, float(result["score"]), bool(result.get("passed")),
                   details.get("threshold"), dims, details.get("sample_scores"))

    def result(self) -> dict[str, Any]:
        """As the headline reads a result: status, score, passed."""
        if not self.processed:
            return {"status": "error", "score": None, "passed": False}
        return {"status": "processed", "score": self.score, "passed": self.passed}


Key = tuple[int, str, str]  # (judge, evaluator, case)


class JudgeChecks:
    """Collects judge records (`add`) and makes the cards (`metrics`)."""

    def __init__(self, options: EvaluateOptions, rubrics: Mapping[str, Rubric],
                 prompt_sha256: str, humans: HumanLabels | None = None):
        self.options = options
        self.rubrics = rubrics
        self.prompt_sha256 = prompt_sha256
        self.humans = humans
        self.main: dict[Key, Verdict] = {}
        self.controls: dict[tuple[Key, str], Verdict] = {}
        self.rubric_of: dict[str, str] = {}  # evaluator label -> rubric name

    def add(self, record: Record) -> None:
        meta = record.metadata
        key = (int(meta.get("judge", 1)), str(meta.get("evaluator", record.group)),
               str(meta.get("case", record.id)))
        if isinstance(record.target, dict) and "rubric" in record.target:
            self.rubric_of.setdefault(key[1], str(record.target["rubric"]))
        found = Verdict.of(record)
        control = meta.get("control")
        if not control:
            self.main[key] = found
            return
        edit = meta.get("edit")
        if found.processed and isinstance(edit, dict):
            made = Edit(kind=edit["kind"], output="", change=str(edit.get("change", "")),
                        markers=tuple(edit.get("markers") or ()), detail=str(edit["detail"]))
            details = (record.parsed.get("result") or {}).get("details") or {}
            found.named = named(made, details)
            found.change = made.change
        self.controls[(key, str(control))] = found

    # -- the headline with several judges -----------------------------------------------------
    def panel(self, evaluator: str, case: str) -> dict[str, Any]:
        """A case's result over every judge: the mean (or median) of their scores, passed
        at the evaluator's threshold; an error when any judge could not grade it."""
        verdicts = [self.main.get((j, evaluator, case)) for j in range(1, self.options.judges + 1)]
        if len(verdicts) == 1 and verdicts[0] is not None:
            return verdicts[0].result()
        if any(v is None or not v.processed for v in verdicts):
            return {"status": "error", "score": None, "passed": False}
        scores = [v.score for v in verdicts if v is not None and v.score is not None]
        pick = statistics.median if self.options.panel_score == "median" else statistics.fmean
        score = pick(scores)
        threshold = next((v.threshold for v in verdicts if v and v.threshold is not None), 0.7)
        return {"status": "processed", "score": score, "passed": score >= threshold}

    # -- the cards ----------------------------------------------------------------------------
    def metrics(self) -> JudgesMetrics:
        # In key order, whatever the journal's: a merged run's cards equal the run's done in
        # one piece (the bootstrap resamples the cases in this order).
        self.controls = dict(sorted(self.controls.items(), key=lambda item: item[0]))
        self.main = dict(sorted(self.main.items(), key=lambda item: item[0]))
        judges = range(1, self.options.judges + 1)
        evaluators = sorted({k[1] for k in self.main})
        cards = [self._card(j, evaluators) for j in judges]
        out = JudgesMetrics(cards=cards, controls=list(self.options.judge_controls))
        if self.options.judges > 1:
            out.panel_score = self.options.panel_score
            out.agreement = {e: self._between(e) for e in evaluators}
        else:
            out.agreement_unavailable = "one judge (give --judge-model more than once)"
        if self.humans is not None:
            unused = self.humans.unused(self._asked_of_people())
            out.human_labels = HumanLabelsInfo(
                source=self.humans.source, sha256=self.humans.sha256,
                labels=len(self.humans.scores), unused=len(unused),
                unused_named=[shown(key) for key in unused[:UNUSED_NAMED]])
        return out

    def _asked_of_people(self) -> Iterator[tuple[str, str, str]]:
        """Every (case, evaluator, dimension) of the run a human score may be for."""
        for evaluator, case in sorted({(e, c) for _, e, c in self.main}):
            rubric = self._rubric(evaluator)
            for dimension in rubric.dimensions if rubric is not None else ():
                yield case, evaluator, dimension.key

    def _card(self, judge: int, evaluators: Sequence[str]) -> JudgeCard:
        options = self.options
        settings = options.judge_settings()
        card = JudgeCard(
            judge=judge, temperature=settings.temperature or 0.0,
            seeds=list(range(options.judge_samples)) if options.judge_samples > 1 else None,
            samples=options.judge_samples, max_tokens=options.judge_max_tokens,
            prompt_sha256=self.prompt_sha256)
        if judge > 1:
            other = options.panel[judge - 2]
            card.model, card.kind = other.model, other.kind
        for evaluator in evaluators:
            card.evaluators[evaluator] = self._pass_rate(judge, evaluator)
            if BLIND in options.judge_controls:
                card.blind.append(self._blind(judge, evaluator))
            if ORDER in options.judge_controls and self._has(judge, evaluator, ORDER):
                card.order.append(self._order(judge, evaluator))
        if "probes" in options.judge_controls:
            card.probes = self._probes(judge)
        if options.judge_samples > 1:
            card.self_agreement = {e: self._itself(judge, e) for e in evaluators}
        else:
            card.self_agreement_unavailable = "one verdict per case (--judge-samples 1)"
        if self.humans is not None:
            card.humans = [h for e in evaluators for h in self._people(judge, e)]
        card.flags = _flags(card)
        return card

    def _pass_rate(self, judge: int, evaluator: str) -> EvaluatorMetrics:
        """The judge's own pass rate and mean score on the evaluator's cases."""
        found = [v for k, v in self.main.items() if k[0] == judge and k[1] == evaluator]
        done = [v for v in found if v.processed]
        block = EvaluatorMetrics(n=len(found), processed=len(done), errors=len(found) - len(done),
                                 skipped=0, passed=sum(v.passed for v in done))
        if done:
            block.pass_rate = block.passed / len(done)
            block.mean_score = statistics.fmean(v.score or 0.0 for v in done)
        else:
            block.unavailable = f"no processed results ({block.errors} errors)"
        block.judge_variation, block.judge_variation_unavailable = \
            self._variation(evaluator, done)
        return block

    def _variation(self, evaluator: str, done: Sequence[Verdict]
                   ) -> tuple[JudgeVariation | None, str | None]:
        """The split of the judge's mean score, from each case's verdicts' weighted scores
        (the cases in key order: the same split whatever the journal's order)."""
        rubric = self._rubric(evaluator)
        if rubric is None:
            return None, "the evaluator's rubric is not known"
        scores = [[rubric.weighted(s) for s in v.samples or ()] for v in done]
        return judge_variation(scores, self.options.judge_samples)

    def _has(self, judge: int, evaluator: str, control: str) -> bool:
        return any(k[0] == judge and k[1] == evaluator and c == control
                   for (k, c) in self.controls)

    def _pairs(self, judge: int, evaluator: str | None, control: str
               ) -> tuple[list[tuple[Verdict, Verdict]], int]:
        """(as asked, under the control) per case where both were graded, of one evaluator
        or (None) all; and how many cases had an error on either side."""
        pairs, errors = [], 0
        for (key, name), found in self.controls.items():
            if key[0] != judge or name != control or evaluator not in (None, key[1]):
                continue
            asked = self.main.get(key)
            if asked is None or not asked.processed or not found.processed:
                errors += 1
                continue
            pairs.append((asked, found))
        return pairs, errors

    def _differences(self, evaluator: str, pairs: list[tuple[Verdict, Verdict]]
                     ) -> tuple[Difference | None, dict[str, Difference], int]:
        """The weighted score's and each dimension's paired difference; identical cases."""
        if not pairs:
            return None, {}, 0
        rubric = self._rubric(evaluator)
        dims = [d.key for d in rubric.dimensions] if rubric else sorted(pairs[0][0].dimensions)
        rows = np.nan_to_num(np.array(
            [[(a.score or 0.0) - (b.score or 0.0),
              *(a.dimensions.get(d, np.nan) - b.dimensions.get(d, np.nan) for d in dims)]
             for a, b in pairs], dtype=np.float64))
        found = summaries(rows, mean_statistic, [SCORE, *dims])
        made = {}
        for i, name in enumerate([SCORE, *dims]):
            column = rows[:, i]
            block = Difference(n=len(rows), mean=float(column.mean()),
                               changed=int((np.abs(column) > 1e-9).sum()))
            if "ci95" in found[name]:
                low, high = found[name]["ci95"]
                block.ci95 = (low, high)
            else:
                block.ci95_unavailable = found[name]["unavailable"]
            made[name] = block
        identical = int((np.abs(rows[:, 1:]) < 1e-9).all(axis=1).sum()) if dims else 0
        return made.pop(SCORE), made, identical

    def _rubric(self, evaluator: str) -> Rubric | None:
        name = self.rubric_of.get(evaluator)
        return self.rubrics.get(name) if name else None

    def _control(self, judge: int, evaluator: str, control: str, graded: str
                 ) -> tuple[ControlCheck, tuple[float, float, str] | None]:
        """The control's check with its differences, left inconclusive, and (low, high,
        the difference as shown) when it has an interval to judge by."""
        pairs, errors = self._pairs(judge, evaluator, control)
        score, dims, identical = self._differences(evaluator, pairs)
        n = len(pairs)
        check = ControlCheck(evaluator=evaluator, n=n, errors=errors, score=score,
                             dimensions=dims, identical=identical, verdict="inconclusive",
                             finding="not enough cases",
                             why=f"{n} case{'s' if n != 1 else ''} {graded} (2 or more "
                                 "are needed)")
        if score is None or score.ci95 is None:
            return check, None
        lo, hi = score.ci95
        return check, (lo, hi, f"{score.mean:+.2f} [{lo:.2f}, {hi:.2f}]")

    def _blind(self, judge: int, evaluator: str) -> ControlCheck:
        check, found = self._control(judge, evaluator, BLIND,
                                     "graded with and without the images")
        if found is None:
            return check
        lo, hi, shown = found
        if not lo <= 0.0 <= hi:
            check.verdict, check.finding = "pass", "looks at the image"
            check.why = f"its score moves without the images: {shown}"
        elif check.identical >= IDENTICAL_SHARE * check.n or \
                (lo >= -NEGLIGIBLE and hi <= NEGLIGIBLE):
            check.verdict, check.finding = "flag", "ignores the image"
            check.why = (f"{check.identical} of {check.n} cases scored the same without the "
                         f"images; difference {shown}")
        else:
            check.finding = "no clear change"
            check.why = f"difference {shown} covers 0 and the scores vary"
        return check

    def _order(self, judge: int, evaluator: str) -> ControlCheck:
        check, found = self._control(judge, evaluator, ORDER,
                                     "with two or more images graded in both orders")
        if found is None:
            return check
        lo, hi, shown = found
        if not lo <= 0.0 <= hi:
            check.verdict, check.finding = "flag", "position bias"
            check.why = f"as given minus swapped: {shown}"
        elif lo >= -NO_BIAS and hi <= NO_BIAS:
            check.verdict, check.finding = "pass", "no position bias"
            check.why = f"as given minus swapped: {shown}, within ±{NO_BIAS}"
        else:
            check.finding = "bias not ruled out"
            check.why = f"as given minus swapped: {shown}: too wide to rule one out"
        return check

    def _probes(self, judge: int) -> list[ProbeCheck]:
        """Each kind of edit over every evaluator it was made for."""
        out = []
        for kind in KINDS:
            pairs, errors = self._pairs(judge, None, EDIT + kind)
            if not pairs and not errors:
                continue
            detail = DETAIL[kind]
            n = len(pairs)
            dropped = sum(1 for a, b in pairs if (b.score or 0) < (a.score or 0))
            said = sum(1 for _, b in pairs if b.named)
            both = sum(1 for a, b in pairs if b.named and (b.score or 0) < (a.score or 0))
            check = ProbeCheck(kind=kind, detail=detail, n=n, errors=errors, dropped=dropped,
                               named=said, detected=both, verdict="inconclusive",
                               finding="not enough cases", why="no case graded both ways",
                               examples=[b.change for _, b in pairs[:EXAMPLES] if b.change])
            if n:
                check.rate = both / n
                lo, hi = wilson(both, n)
                check.ci95 = (lo, hi)
                rows = np.array([[(a.score or 0) - (b.score or 0)] for a, b in pairs])
                found_drop = summaries(rows, mean_statistic, ["drop"])["drop"]
                check.drop = Difference(n=n, mean=float(rows.mean()),
                                        changed=int((np.abs(rows) > 1e-9).sum()))
                if "ci95" in found_drop:
                    low, high = found_drop["ci95"]
                    check.drop.ci95 = (low, high)
                else:
                    check.drop.ci95_unavailable = found_drop["unavailable"]
                shown = f"{both} of {n} [{100 * lo:.0f}%, {100 * hi:.0f}%]"
                if lo >= 0.5:
                    check.verdict, check.finding = "pass", "notices them"
                elif hi < 0.5:
                    check.verdict, check.finding = "flag", "misses them"
                else:
                    check.finding = "unclear"
                check.why = (f"detected {shown} (score lower {dropped}, named in "
                             f"{detail} {said})")
            out.append(check)
        return out

    def _itself(self, judge: int, evaluator: str) -> dict[str, Agreement]:
        """Alpha over the judge's samples of each case (raters: the sample's seed)."""
        rubric = self._rubric(evaluator)
        cases = [v for k, v in sorted(self.main.items())
                 if k[0] == judge and k[1] == evaluator and v.processed and v.samples]
        if rubric is None:
            return {}
        width = max((len(v.samples or ()) for v in cases), default=0)
        out = {}
        for name in [SCORE, *(d.key for d in rubric.dimensions)]:
            ratings = np.full((width, len(cases)), np.nan)
            for u, verdict in enumerate(cases):
                for r, scores in enumerate(verdict.samples or ()):
                    ratings[r, u] = 10 * rubric.weighted(scores) if name == SCORE \
                        else scores.get(name, np.nan)
            out[name] = _agreement(ratings)
        return out

    def _between(self, evaluator: str) -> dict[str, Agreement]:
        """Alpha over the judges (raters) and cases (units), per dimension and score."""
        rubric = self._rubric(evaluator)
        cases = sorted({k[2] for k in self.main if k[1] == evaluator})
        names = [SCORE, *(d.key for d in rubric.dimensions)] if rubric else [SCORE]
        out = {}
        for name in names:
            ratings = np.full((self.options.judges, len(cases)), np.nan)
            for u, case in enumerate(cases):
                for j in range(self.options.judges):
                    found = self.main.get((j + 1, evaluator, case))
                    if found is not None and found.processed:
                        ratings[j, u] = 10 * (found.score or 0.0) if name == SCORE \
                            else found.dimensions.get(name, np.nan)
            out[name] = _agreement(ratings)
        return out

    def _people(self, judge: int, evaluator: str) -> list[HumanCheck]:
        """The judge against people: on the weighted score (people's own weighted by the
        rubric, where they scored every dimension of a case), and per dimension."""
        humans = self.humans
        rubric = self._rubric(evaluator)
        if humans is None or rubric is None:
            return []
        graded = [(case, found) for (j, e, case), found in sorted(self.main.items())
                  if j == judge and e == evaluator and found.processed]
        totals: list[tuple[float, float]] = []
        per_dim: dict[str, list[tuple[float, float]]] = {d.key: [] for d in rubric.dimensions}
        for case, found in graded:
            labels = {d.key: humans.lookup(case, evaluator, d.key) for d in rubric.dimensions}
            for key, label in labels.items():
                if label is not None and key in found.dimensions:
                    per_dim[key].append((label.mean, found.dimensions[key]))
            if all(labels.values()) and found.score is not None:
                people = rubric.weighted({k: v.mean for k, v in labels.items() if v})
                totals.append((10 * people, 10 * found.score))
        out = [_human(evaluator, SCORE, totals, against_reference)] if totals else []
        out += [_human(evaluator, key, points, against_reference)
                for key, points in per_dim.items() if points]
        return out


def _human(evaluator: str, dimension: str, points: list[tuple[float, float]],
           compare: Any) -> HumanCheck:
    found = compare([j for _, j in points], [h for h, _ in points])
    return HumanCheck(evaluator=evaluator, dimension=dimension, n=found.n, alpha=found.alpha,
                      alpha_ci95=found.alpha_ci95, spearman=found.spearman,
                      spearman_p=found.spearman_p, mean_abs_diff=found.mean_abs_diff,
                      mean_diff=found.mean_diff, unavailable=found.unavailable,
                      points=points[:POINTS_CAP])


def _agreement(ratings: np.ndarray) -> Agreement:
    found = agreement(ratings, "interval")
    return Agreement(alpha=found.alpha, ci95=found.ci95, units=found.units,
                     raters=found.raters, unavailable=found.unavailable,
                     reading=reading(found.alpha))


def _flags(card: JudgeCard) -> list[str]:
    """Each check the judge failed, in one line."""
    flags = [f"{c.finding} ({c.evaluator}): {c.why}" for c in card.blind + card.order
             if c.verdict == "flag"]
    flags += [f"misses {p.kind} edits: {p.why}" for p in card.probes if p.verdict == "flag"]
    for evaluator, rows in card.self_agreement.items():
        own = rows.get(SCORE)
        if own is not None and own.alpha is not None and own.alpha < TENTATIVE:
            flags.append(f"disagrees with itself ({evaluator}): alpha {own.alpha:.2f} over "
                         f"its {card.samples} samples")
    for human in card.humans:
        if human.dimension == SCORE and human.alpha is not None and human.alpha < TENTATIVE:
            flags.append(f"disagrees with people ({human.evaluator}, {human.dimension}): "
                         f"alpha {human.alpha:.2f} over {human.n} scores")
    return flags
