"""Simulation against the exact stationary distribution of small systems (numeric.exact)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from numeric.exact import solve_exact
from sim import simulate_supermarket


def t_ratio(batches: int, level: float) -> float:
    """Two-sided ``level`` over 95% Student-t quantile: turns a 95% half-width into one
    at ``level``."""
    return float(stats.t.ppf(0.5 + level / 2, batches - 1) / stats.t.ppf(0.975, batches - 1))


@pytest.mark.parametrize(
    ("N", "lam", "b", "d", "replacement"),
    [
        (5, "0.9", 3, 2, True),
        (8, "0.85", 4, 3, True),
        (6, "0.9", 5, 2, False),
        (10, "0.9109", 4, 2, False),
        (7, "0.9", 4, 3, False),
        (3, "0.9", 12, 2, True),  # b (b + 1) / 2 = 78 > 64: thinning 2^-7, not 2^-6
    ],
)
def test_aggregated_matches_exact(N, lam, b, d, replacement):
    """Exact n_mse, E[S], blocking, N Cov(S) and the queue-length pmf lie in the
    simulation's 99% intervals (vectors jointly, Bonferroni: each entry at 1 - 0.01/m)."""
    ex = solve_exact(N, lam, b, d, replacement=replacement)
    r = simulate_supermarket(
        N, lam, b, d, replacement=replacement, steps=2 * 10**6, reps=2, seed=1, workers=1
    )
    M = r.batches * r.reps
    assert abs(float(ex.n_mse) - r.n_mse.mean) <= t_ratio(M, 0.99) * r.n_mse.ci95
    tol = t_ratio(M, 1 - 0.01 / b) * r.mean.ci95
    assert np.all(np.abs(np.asarray(ex.mean, dtype=float) - r.mean.mean) <= tol)
    blk = float(ex.blocking)
    assert abs(blk - r.blocking.mean) <= t_ratio(M, 0.99) * r.blocking.ci95 + 1e-12
    # N Cov(S) from the thinned second moments, and the queue-length pmf (joint 99%)
    iu = np.triu_indices(b)
    tol_cov = t_ratio(M, 1 - 0.01 / len(iu[0])) * r.n_cov.ci95[iu]
    assert np.all(np.abs(np.asarray(ex.n_cov)[iu] - r.n_cov.mean[iu]) <= tol_cov)
    tol_pmf = t_ratio(M, 1 - 0.01 / (b + 1)) * r.queue_length_pmf.ci95
    assert np.all(np.abs(ex.queue_length_pmf - r.queue_length_pmf.mean) <= tol_pmf)
