"""The variants as a user reads them: the rows of the table (terminal, report, CSV) and the
lines about answering without the image. One place, so every view says the same."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from rich.console import Console

from visioneval import fmt
from visioneval.core.printed import print_table
from visioneval.stats.paired import WILD_CLUSTER
from visioneval.terminal import line
from visioneval.variants.summary import Difference, Estimate, VariantResult, VariantsSummary

HEADER = ["variant", "metric", "n", "stored", "changed [95%]", "diff.", "p or diff. 95%",
          "sig."]
NOTE = ("Each variant is the same samples sent changed (run.json says exactly how); its "
        "metrics are on the samples answered in both forms. diff.: changed minus stored, in "
        "points. p: McNemar's exact test (exact match and other 0/1 outcomes); otherwise the "
        "95% interval of the difference by a paired bootstrap (1000 seeded resamples). sig.: "
        "significant at 5% (p below 0.05, or an interval that leaves out 0). A pooled metric "
        "(several answers about one image) resamples whole images and is tested with "
        "the wild cluster bootstrap-t (Webb weights). Failed requests are errors, left out of "
        "both sides.")


@dataclass(frozen=True)
class Row:
    variant: str
    metric: str
    n: int
    stored: Estimate | None
    changed: Estimate | None
    test: Difference | None
    unavailable: str | None

    def numbers(self) -> tuple[str, str, str, str] | None:
        """(stored, changed [95%], difference, p or the difference's interval) as shown;
        None when the metric could not be compared."""
        if self.unavailable or self.stored is None or self.changed is None or \
                self.test is None:
            return None
        test = _p(self.test.p) if self.test.p is not None else \
            f"[{fmt.interval(self.test.ci95, joiner=', ')}]"
        return (fmt.pct(self.stored.value), estimate(self.changed),
                fmt.pct(self.test.difference, signed=True), test)

    def cells(self) -> list[str]:
        found = self.numbers()
        if found is None or self.test is None:
            return [self.variant, self.metric, str(self.n), "-", "-", "-", "-",
                    self.unavailable or "not computed"]
        return [self.variant, self.metric, str(self.n), *found,
                "yes" if self.test.significant else "no"]


def estimate(value: Estimate) -> str:
    """"93.0 [88.0, 97.0]": percent with its 95% interval."""
    ci = f" [{fmt.interval(value.ci95, joiner=', ')}]" if value.ci95 else ""
    return f"{fmt.pct(value.value)}{ci}"


def test_text(test: Difference) -> str:
    """McNemar's p, or the bootstrap interval of the difference (points)."""
    if test.p is not None:
        name = "wild cluster-t" if test.test == WILD_CLUSTER else "McNemar"
        return f"{name} p {_p(test.p)}"
    return f"bootstrap [{fmt.interval(test.ci95, joiner=', ')}]"


def _p(p: float | None) -> str:
    return "-" if p is None else f"{p:.3g}"


def verdict(test: Difference) -> str:
    return "significant" if test.significant else "not significant"


def rows(summary: VariantsSummary) -> Iterator[Row]:
    """The variants in order (a curve's points by its axis), each metric a row."""
    for variant in ordered(summary.variants):
        for m in variant.metrics:
            yield Row(variant.name, m.metric, m.n, m.original, m.variant, m.versus_original,
                      m.unavailable)


def ordered(variants: list[VariantResult]) -> list[VariantResult]:
    """Variants as given, except a curve's points from the gentlest to the harshest (high
    quality or size first)."""
    first_seen: dict[str, int] = {}
    for i, v in enumerate(variants):
        first_seen.setdefault(v.kind, i)
    return sorted(variants, key=lambda v: (first_seen[v.kind], -(v.axis_value or 0.0)))


def without_image(summary: VariantsSummary) -> list[str]:
    """One line per metric of each variant that leaves nothing of the image: its score
    against chance and against the stored images."""
    lines = []
    for variant in summary.variants:
        if not variant.removes_image:
            continue
        for m in variant.metrics:
            if m.variant is None or m.original is None or m.versus_original is None:
                continue
            line = (f"{variant.name}: {m.metric} {fmt.pct(m.variant.value)}% "
                    f"[{fmt.interval(m.variant.ci95, joiner=', ')}] without the image")
            if m.chance is not None and m.versus_chance is not None:
                line += (f"; chance {fmt.pct(m.chance.value)}%, difference "
                         f"{fmt.pct(m.versus_chance.difference, signed=True)} points "
                         f"[{fmt.interval(m.versus_chance.ci95, joiner=', ')}] "
                         f"({verdict(m.versus_chance)})")
            line += (f"; with it {fmt.pct(m.original.value)}% "
                     f"({fmt.pct(m.versus_original.difference, signed=True)} points, "
                     f"{verdict(m.versus_original)}, {test_text(m.versus_original)})")
            lines.append(line)
        right = variant.answered_without_image
        if right is not None:
            lines.append(f"{variant.name}: {right.count} of {right.n} samples answered "
                         "correctly without the image (listed in variants.json and the "
                         "report)")
    if any(v.removes_image for v in summary.variants) and summary.chance_unavailable:
        lines.append(f"chance: {summary.chance_unavailable}")
    return lines


TERMINAL_HEADER = ["variant", "metric", "stored", "changed [95%]", "diff.", "test"]
TERMINAL_NOTE = ("* significant at 5%. test: McNemar's exact p for exact match and other 0/1 "
                 "outcomes (clustered by image on a pooled metric), else the paired bootstrap's "
                 "95% interval of the difference (points). Metrics on the samples answered in "
                 "both forms; the report has each n and the stored value's interval.")


def show(summary: VariantsSummary, console: Console, details: bool = True) -> None:
    """The variants table and (with `details`) the without-the-image lines, in the terminal
    (narrower than the report's: a variant named once per block, n and the stored interval
    left out)."""
    found, last = [], None
    for row in rows(summary):
        name = row.variant if row.variant != last else ""
        last = row.variant
        numbers = row.numbers()
        if numbers is None or row.test is None:
            found.append([name, row.metric, "-", "-", "-", row.unavailable or "not computed"])
            continue
        stored, changed, difference, test = numbers
        found.append([name, row.metric, stored, changed, difference,
                      test + (" *" if row.test.significant else "")])
    print_table(console, "Variants against the stored images (percent; same samples, paired)",
                TERMINAL_HEADER, found, TERMINAL_NOTE, numeric_from=2, text=(3, 5))
    if not details:
        return
    for text in without_image(summary):
        line(console, text)
    if summary.chance_rule and any(v.removes_image for v in summary.variants):
        line(console, summary.chance_rule)
