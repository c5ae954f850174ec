"""Maximum likelihood for many rows of counts at once (a fit's starts, a bootstrap's
refits): Newton's method with Levenberg-Marquardt damping on every row together, the
log-likelihood's own curvature where it is concave and the Fisher information where it is
not (Fisher scoring alone crawls near some maxima). A step is kept only when the
log-likelihood does not fall; a parameter at a bound that the gradient pushes beyond, or a
fixed one (its bounds equal), is held for that step. A row has converged when the gain the
undamped step promises, relative to the log-likelihood, is below scipy's L-BFGS-B default.
Shared by the PSE fit (`stats.pse_fit`) and the Weber-fraction fit (`stats.weber_fit`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

ITERATIONS = 200
RELATIVE_GAIN = 1e7 * 2.2e-16  # scipy's L-BFGS-B default (factr times the machine eps)

LogLikelihood = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""(parameters a row, counts a row) -> the log-likelihood of each row."""
Score = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]
"""(parameters, counts) -> each row's gradient, Hessian and Fisher information."""


def ascend(theta: np.ndarray, k: np.ndarray, low: np.ndarray, high: np.ndarray,
           log_likelihood: LogLikelihood, score_of: Score
           ) -> tuple[np.ndarray, np.ndarray]:
    """Every row of `theta` (parameters within [`low`, `high`]) moved to its maximum for
    the counts in the same row of `k`; returns the parameters and whether each converged."""
    theta = np.clip(theta.astype(np.float64), low, high)
    log_l = log_likelihood(theta, k)
    damping = np.full(len(k), 1e-3)
    converged = np.zeros(len(k), dtype=bool)
    live = np.arange(len(k))
    eye = np.eye(theta.shape[1])
    for _ in range(ITERATIONS):
        t, kk = theta[live], k[live]
        score, hessian, information = score_of(t, kk)
        free = ~(((t <= low) & (score < 0)) | ((t >= high) & (score > 0)))
        free &= high > low
        score = np.where(free, score, 0.0)
        both = free[:, :, None] & free[:, None, :]
        held = eye * np.where(free, 0.0, 1.0)[:, None, :]
        concave = np.linalg.eigvalsh(np.where(both, -hessian, 0.0) + held).min(axis=1) > 0
        curvature = np.where(concave[:, None, None], -hessian, information)
        matrix = np.where(both, curvature, 0.0) + held + eye * 1e-12
        newton = np.linalg.solve(matrix, score[..., None])[..., 0]
        done = (score * newton).sum(axis=1) / 2 < RELATIVE_GAIN * np.maximum(
            np.abs(log_l[live]), 1.0)
        diagonal = damping[live, None] * np.einsum("rii->ri", matrix)
        step = np.linalg.solve(matrix + eye * (diagonal * free)[:, None, :],
                               score[..., None])[..., 0]
        candidate = np.clip(t + step, low, high)
        gained = log_likelihood(candidate, kk)
        better = (gained >= log_l[live]) & ~done
        theta[live] = np.where(better[:, None], candidate, t)
        log_l[live] = np.where(better, gained, log_l[live])
        damping[live] = np.where(better, np.maximum(damping[live] / 4, 1e-9),
                                 damping[live] * 8)
        converged[live] = done
        live = live[~done & (damping[live] < 1e12)]
        if not len(live):
            break
    return theta, converged
