"""The two simulators against each other and against textbook and large-N limits."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from mfstein.families.supermarket.solver import solve_supermarket
from sim import simulate_supermarket


def t_ratio(batches: int, level: float) -> float:
    """Two-sided ``level`` over 95% Student-t quantile: turns a 95% half-width into one
    at ``level``."""
    return float(stats.t.ppf(0.5 + level / 2, batches - 1) / stats.t.ppf(0.975, batches - 1))


@pytest.mark.parametrize(
    ("policy", "d", "replacement"), [("pod", 2, True), ("pod", 2, False), ("random", 1, True)]
)
def test_per_server_agrees_with_aggregated(policy, d, replacement):
    """Same system, two simulators, independent seeds: n_mse, E[S] agree within the 99%
    interval of the difference; per-server response times obey Little's law."""
    N, lam, b = 12, "0.9", 5
    kw = dict(replacement=replacement, steps=2 * 10**6, reps=2, workers=1)
    a = simulate_supermarket(N, lam, b, d, seed=2, **kw)
    p = simulate_supermarket(N, lam, b, d, policy=policy, engine="per-server", seed=3, **kw)
    k = t_ratio(a.batches * a.reps, 0.99)
    assert abs(a.n_mse.mean - p.n_mse.mean) <= k * np.hypot(a.n_mse.ci95, p.n_mse.ci95)
    kb = t_ratio(a.batches * a.reps, 1 - 0.01 / b)
    assert np.all(np.abs(a.mean.mean - p.mean.mean) <= kb * np.hypot(a.mean.ci95, p.mean.ci95))
    # Little: E[jobs in system] = throughput * E[response]; throughput = lam N (1 - blocking)
    rt = p.response_time
    little = p.mean_jobs.mean / (float(lam) * (1 - p.blocking.mean))
    assert abs(rt["mean"] - little) <= k * np.hypot(rt["ci95"], p.mean_jobs.ci95 / float(lam))


def test_single_server_is_mm1b():
    """N = 1: every policy is the M/M/1/b queue, pmf proportional to lam^k (textbook)."""
    lam, b = 0.7, 4
    pmf = lam ** np.arange(b + 1)
    pmf /= pmf.sum()
    for policy in ("jsq", "pod", "random"):
        r = simulate_supermarket(
            1, lam, b, 2, policy=policy, steps=10**6, reps=2, seed=4, workers=1
        )
        kb = t_ratio(r.batches * r.reps, 1 - 0.01 / (b + 1))
        assert np.all(np.abs(r.queue_length_pmf.mean - pmf) <= kb * r.queue_length_pmf.ci95)
        k = t_ratio(r.batches * r.reps, 0.99)
        assert abs(r.blocking.mean - pmf[b]) <= k * r.blocking.ci95


def test_light_traffic_large_N_approaches_constant():
    """lam = 0.5, N = 200, b = 6: N E||S - s*||^2 = c + ||V||^2/N + O(1/N).

    Theorem 1 gives c; the refined mean field (E[S] = s* + V/N + O(1/N^2)) adds the
    squared bias ||V||^2/N, and the remaining correction is O(1/N) with a coefficient
    of the order of c itself in light traffic, so we allow c/N on top of the 99% CI.
    """
    sol = solve_supermarket("0.5", 6)
    c = float(sol.constant)
    V = np.array([float(v) for v in sol.V])
    N = 200
    r = simulate_supermarket(N, "0.5", 6, steps=4 * 10**6, reps=2, seed=5, workers=1)
    target = c + V @ V / N
    slack = c / N
    assert abs(r.n_mse.mean - target) <= t_ratio(r.batches * r.reps, 0.99) * r.n_mse.ci95 + slack
    # and the refined bias N(E[S] - s*) -> V within its joint 99% interval (+ O(1/N))
    kb = t_ratio(r.batches * r.reps, 1 - 0.01 / 6)
    assert np.all(np.abs(r.n_bias.mean - V) <= kb * r.n_bias.ci95 + np.abs(V) * 5 / N + 1e-3)
