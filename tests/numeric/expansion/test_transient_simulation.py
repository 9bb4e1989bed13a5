"""The transient expansion against a direct stochastic simulation.

Independent route: a Gillespie simulation of the SIRS chain written here (all
replications advanced in lockstep with NumPy; seeded), the empirical mean of
S(t)/N over many replications with its standard error, at N = 50 from the same
deterministic start.  ``x(t) + V(t)/N`` must lie within 4 standard errors, and
the correction ``V(t)/N`` must be resolved: the plain mean field ``x(t)`` must
lie outside them at some time.
"""

from __future__ import annotations

import numpy as np

from derive.models import load_model
from numeric.expansion.transient import transient

SIR = {"beta": 3.0, "gamma": 1.0, "rho": 0.5, "a": 0.1}
START = (0.76, 0.24, 0.0)  # times N = 50: whole numbers
TIMES = (0.5, 2.0, 5.0)


def _gillespie(N: int, runs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error of (S, I, R)/N at TIMES over ``runs`` replications."""
    rng = np.random.default_rng(seed)
    x = np.tile(np.round(np.array(START) * N).astype(np.int64), (runs, 1))
    t = np.zeros(runs)
    out = np.zeros((len(TIMES), runs, 3))
    jumps = np.array([[-1, 1, 0], [0, -1, 1], [1, 0, -1]])
    k = 0
    for k, T in enumerate(TIMES):
        active = t < T
        while active.any():
            S, I, R = (x[active, j].astype(float) for j in range(3))
            rates = np.stack(
                [(SIR["a"] + SIR["beta"] * I / N) * S, SIR["gamma"] * I, SIR["rho"] * R], axis=1
            )
            total = rates.sum(axis=1)
            dt = rng.exponential(1.0, size=total.size) / total
            idx = np.flatnonzero(active)
            jumps_now = t[idx] + dt <= T
            u = rng.random(total.size) * total
            which = (u[:, None] > np.cumsum(rates, axis=1)).sum(axis=1)
            moving = idx[jumps_now]
            x[moving] += jumps[which[jumps_now]]
            t[moving] += dt[jumps_now]
            active[idx[~jumps_now]] = False
            t[idx[~jumps_now]] = T  # memoryless: restart the clock at T
        out[k] = x / N
    mean = out.mean(axis=1)
    se = out.std(axis=1, ddof=1) / np.sqrt(runs)
    return mean, se


def test_transient_expansion_against_simulation() -> None:
    N, runs = 50, 20_000
    mean, se = _gillespie(N, runs, seed=20261130)
    res = transient(load_model("sir"), SIR, times=list(TIMES), start=list(START), order=1)
    x = np.asarray(res.x)
    refined = x + np.asarray(res.V) / N
    assert np.all(np.abs(mean - refined) <= 4 * se + 1e-12), (mean, refined, se)
    assert np.any(np.abs(mean - x) > 4 * se), (mean, x, se)
