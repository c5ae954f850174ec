"""Adaptive placement by the Psi method (Kontsevich & Tyler 1999): a grid posterior over the
psychometric function's α, β and λ, and the next level is the candidate whose answer is
expected to leave the least posterior entropy, which seeks threshold and slope together.

Model requests run in parallel, so a track proposes k levels at once (the k candidates of
least expected entropy; the posterior changes little over k answers when k is small against
the budget), and several interleaved tracks (one per feature, say) keep many requests in
flight. The answers are kept as counts per level, so the same maximum-likelihood fit and
bootstrap (psychometric_fit.fit) give the threshold and its interval at the end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from visioneval.stats.psychometric import Sigmoid

BETAS_WEIBULL = (0.8, 10.0)
LAPSES = (0.0, 0.02, 0.05)


class PsiTrack:
    """One adaptive track over fixed candidate levels (the levels a stimulus set offers)."""

    def __init__(self, candidates: Sequence[float], guess: float, form: Sigmoid = "weibull",
                 alphas: int = 40, betas: int = 12, lapses: Sequence[float] = LAPSES):
        self.candidates = np.asarray(sorted(set(candidates)), dtype=np.float64)
        if len(self.candidates) < 2:
            raise ValueError("an adaptive track needs at least 2 candidate levels")
        if form == "weibull" and (self.candidates <= 0).any():
            raise ValueError("the Weibull needs positive candidate levels")
        self.form = form
        self.guess = guess
        low, high = float(self.candidates[0]), float(self.candidates[-1])
        if form == "weibull":
            alpha = np.geomspace(low / 2, high * 2, alphas)
            beta = np.geomspace(*BETAS_WEIBULL, betas)
        else:
            span = high - low
            alpha = np.linspace(low - span / 4, high + span / 4, alphas)
            beta = np.geomspace(1.0 / span, 40.0 / span, betas)
        grid = np.stack(np.meshgrid(alpha, beta, np.asarray(lapses), indexing="ij"),
                        axis=-1).reshape(-1, 3)
        self.grid = grid  # rows: α, β, λ
        self.table = self._psi(self.candidates[:, None], grid)  # candidates x grid
        self.log_posterior = np.zeros(len(grid))
        self.correct = np.zeros(len(self.candidates))
        self.trials = np.zeros(len(self.candidates))

    def _psi(self, x: np.ndarray, grid: np.ndarray) -> np.ndarray:
        alpha, beta, lapse = grid[:, 0], grid[:, 1], grid[:, 2]
        if self.form == "weibull":
            f = -np.expm1(-((x / alpha) ** beta))
        else:
            f = 1.0 / (1.0 + np.exp(-beta * (x - alpha)))
        return np.clip(self.guess + (1.0 - self.guess - lapse) * f, 1e-9, 1 - 1e-9)

    def record(self, level: float, correct: bool) -> None:
        """One answer at one of the candidate levels."""
        index = int(np.argmin(np.abs(self.candidates - level)))
        if not np.isclose(self.candidates[index], level):
            raise ValueError(f"level {level} is not one of the track's candidate levels")
        p = self.table[index]
        self.log_posterior += np.log(p if correct else 1.0 - p)
        self.log_posterior -= self.log_posterior.max()
        self.correct[index] += bool(correct)
        self.trials[index] += 1

    def posterior(self) -> np.ndarray:
        weights = np.exp(self.log_posterior)
        return weights / weights.sum()

    def expected_entropy(self) -> np.ndarray:
        """Per candidate: the posterior's entropy expected after one more answer there."""
        prior = self.posterior()
        joint_right = self.table * prior
        joint_wrong = (1.0 - self.table) * prior
        out = np.zeros(len(self.candidates))
        for joint in (joint_right, joint_wrong):
            mass = joint.sum(axis=1, keepdims=True)
            post = joint / mass
            entropy = -(post * np.log(np.where(post > 0, post, 1.0))).sum(axis=1)
            out += mass[:, 0] * entropy
        return out

    def propose(self, k: int = 1, allowed: Sequence[bool] | None = None) -> list[float]:
        """The next k levels: the candidates of least expected entropy, best first;
        `allowed` (one flag per candidate, in `candidates` order) leaves some out (a level
        with no stimulus left). Fewer than k when fewer are allowed."""
        order = np.argsort(self.expected_entropy(), kind="stable")
        if allowed is not None:
            mask = np.asarray(allowed, dtype=bool)
            if mask.shape != self.candidates.shape:
                raise ValueError(f"allowed has {mask.size} flags for "
                                 f"{self.candidates.size} candidate levels")
            order = order[mask[order]]
        return [float(self.candidates[i]) for i in order[:max(1, k)]]

    def counts(self) -> tuple[list[float], list[int], list[int]]:
        """(levels, correct, trials) at the levels tested so far, for `fit`."""
        tested = self.trials > 0
        return ([float(x) for x in self.candidates[tested]],
                [int(c) for c in self.correct[tested]], [int(n) for n in self.trials[tested]])


def interleave(tracks: Mapping[str, PsiTrack], k: int) -> list[tuple[str, float]]:
    """k (track, level) proposals spread over the tracks in turn, so an engine can keep k
    requests in flight across several interleaved tracks."""
    names = list(tracks)
    if not names:
        return []
    per_track = {name: tracks[name].propose(-(-k // len(names))) for name in names}
    out: list[tuple[str, float]] = []
    for i in range(k):
        name = names[i % len(names)]
        out.append((name, per_track[name][(i // len(names)) % len(per_track[name])]))
    return out
