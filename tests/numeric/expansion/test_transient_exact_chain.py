"""The transient expansion against the exact law of small finite-N chains.

The generators are written out here from the transitions (not from mfstein's
kernels), the states enumerated, and the law at time t is
``p(t) = p(0) expm(t Q)`` (:func:`scipy.sparse.linalg.expm_multiply`).  With
``e1(N) = |E[S(t)] - x(t) - V(t)/N|`` the first-order error is ``O(1/N^2)``,
so ``N e1(N)`` halves when N doubles; the order-2 expansion is closer still.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest
import scipy.sparse as sps
from scipy.sparse.linalg import expm_multiply

from derive.models import load_model
from numeric.expansion.transient import transient

TIMES = [0.5, 2.0, 10.0]
NS = (20, 40, 80)

SIR = {"beta": 3.0, "gamma": 1.0, "rho": 0.5, "a": 0.1}
SIR_START = [0.75, 0.25, 0.0]
LAM = 0.8
SM_START = [0.5, 0.25]


def _law_means(
    states: list[tuple[int, ...]],
    moves: Callable[[tuple[int, ...]], list[tuple[tuple[int, ...], float]]],
    start: tuple[int, ...],
    N: int,
) -> np.ndarray:
    """``E[S(t)]`` at ``TIMES`` for the chain on ``states`` (counts; S = counts / N)."""
    index = {s: k for k, s in enumerate(states)}
    r, c, d = [], [], []
    for k, s in enumerate(states):
        for target, rate in moves(s):
            if rate > 0:
                r.append(k)
                c.append(index[target])  # KeyError = a jump leaving the state space
                d.append(rate)
    Q = sps.csr_matrix((d, (r, c)), shape=(len(states), len(states)))
    Q = (Q - sps.diags(np.asarray(Q.sum(axis=1)).ravel())).T.tocsr()
    p = np.zeros(len(states))
    p[index[start]] = 1.0
    S = np.array(states, dtype=float) / N
    out, now = [], 0.0
    for t in TIMES:
        p = expm_multiply(Q * (t - now), p)
        now = t
        out.append(p @ S)
    return np.array(out)


def sir_exact(N: int) -> np.ndarray:
    beta, gamma, rho, a = SIR["beta"], SIR["gamma"], SIR["rho"], SIR["a"]
    states = [(i, j, N - i - j) for i in range(N + 1) for j in range(N + 1 - i)]

    def moves(s):
        i, j, k = s
        return [
            ((i - 1, j + 1, k), (a + beta * j / N) * i),  # infection
            ((i, j - 1, k + 1), gamma * j),  # recovery
            ((i + 1, j, k - 1), rho * k),  # loss of immunity
        ]

    start = tuple(round(v * N) for v in SIR_START)
    return _law_means(states, moves, start, N)


def supermarket_exact(N: int) -> np.ndarray:
    """Power-of-two choices, buffer 2: counts (n1 >= n2) of servers with >= 1, >= 2 jobs."""
    states = [(i, j) for i in range(N + 1) for j in range(i + 1)]

    def moves(s):
        n1, n2 = s
        s1, s2 = n1 / N, n2 / N
        return [
            ((n1 + 1, n2), N * LAM * (1 - s1**2)),
            ((n1, n2 + 1), N * LAM * (s1**2 - s2**2)),
            ((n1 - 1, n2), N * (s1 - s2)),
            ((n1, n2 - 1), N * s2),
        ]

    start = tuple(round(v * N) for v in SM_START)
    return _law_means(states, moves, start, N)


CASES = {
    "sir": (lambda: load_model("sir"), SIR, SIR_START, sir_exact),
    "supermarket-b2": (
        lambda: load_model("supermarket", b=2),
        {"lam": LAM},
        SM_START,
        supermarket_exact,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_error_times_N_halves_and_order2_is_closer(case: str) -> None:
    build, params, start, exact = CASES[case]
    res = transient(build(), params, times=TIMES, start=start, order=2)
    scaled = []
    for N in NS:
        E = exact(N)
        e0 = np.max(np.abs(E - res.x), axis=1)
        e1 = np.max(np.abs(E - res.x - res.V / N), axis=1)
        e2 = np.max(np.abs(E - res.mean(N)), axis=1)
        assert np.all(e1 < e0), (case, N, e0, e1)
        assert np.all(e2 < e1), (case, N, e1, e2)
        scaled.append(N * e1)
    for small, large in itertools.pairwise(scaled):
        ratio = small / large
        assert np.all((ratio > 1.6) & (ratio < 2.6)), (case, ratio)
