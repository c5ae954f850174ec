"""The Psi method (Kontsevich & Tyler 1999): a simulated observer's trials concentrate near
its threshold, several tracks interleave, and the counts fit to a threshold in its interval."""

from __future__ import annotations

import numpy as np
import pytest

from visioneval.stats.adaptive import PsiTrack, interleave
from visioneval.stats.psychometric import criterion_level, psi
from visioneval.stats.psychometric_fit import fit

GUESS = 1 / 3
CANDIDATES = np.geomspace(0.5, 60, 30)


def run(track, alpha, beta, lapse, trials, k, rng):
    for _ in range(trials // k):
        for level in track.propose(k):
            track.record(level, rng.random() < psi(level, alpha, beta, GUESS, lapse))


def test_trials_concentrate_near_the_threshold():
    track = PsiTrack(CANDIDATES, GUESS)
    run(track, 10.0, 3.0, 0.02, 120, 4, np.random.default_rng(1))
    levels, _, trials = track.counts()
    weights = np.asarray(trials) / sum(trials)
    share_near = weights[(np.asarray(levels) > 4) & (np.asarray(levels) < 25)].sum()
    assert share_near > 0.7  # the candidates span 0.5 to 60
    found = fit(*track.counts(), GUESS, resamples=100)
    true = criterion_level(0.75, 10.0, 3.0, GUESS, 0.02)
    assert found.status == "reached"
    assert found.threshold_ci[0] <= true <= found.threshold_ci[1]


def test_tracks_interleave_and_spread_the_requests():
    tracks = {"orientation": PsiTrack(CANDIDATES, GUESS), "size": PsiTrack(CANDIDATES, GUESS)}
    proposals = interleave(tracks, 6)
    assert [name for name, _ in proposals] == ["orientation", "size"] * 3
    assert all(level in CANDIDATES for _, level in proposals)


def test_a_level_outside_the_candidates_is_one_clear_line():
    track = PsiTrack(CANDIDATES, GUESS)
    with pytest.raises(ValueError, match="candidate levels"):
        track.record(7.77, True)
