"""State spaces of finite-N population processes on the lattice ``{0..N}^b``.

The finite-N chain of a density-dependent population process lives on integer
vectors ``n = N s``.  :func:`monotone_states` enumerates the supermarket state
space of the core paper, Section 3: ``N >= n_1 >= n_2 >= ... >= n_b >= 0``
(``n_k`` = number of servers holding at least ``k`` jobs).  It has
``C(N + b, b)`` points and a closed-form ranking by the combinatorial number
system: with ``c_k = n_k + b - k`` (strictly decreasing),
``rank(n) = sum_k C(c_k, b - k + 1)`` is a bijection onto ``0 .. C(N + b, b) - 1``.
The states are returned sorted by *level* (total ``sum_k n_k``), the ordering in
which arrivals (+1) and departures (-1) make the generator block tridiagonal.
The reachable states of any model are found by :func:`numeric.exact.lattice.reachable`.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from mfstein.ground.jit import numba


@dataclass
class StateSpace:
    """An enumerated state space, in level order.

    Attributes
    ----------
    N:
        Lattice size (each coordinate lies in ``0..N``).
    states:
        ``(S, b)`` int64 array of the states ``n``, sorted by level ``sum(n)``.
    """

    N: int
    states: np.ndarray

    @property
    def size(self) -> int:
        """The number of states."""
        return int(self.states.shape[0])


def count_monotone(N: int, b: int) -> int:
    """The number of sequences ``N >= n_1 >= ... >= n_b >= 0``: ``C(N + b, b)``."""
    return comb(N + b, b)


def _binom_table(nmax: int, kmax: int) -> np.ndarray:
    table = np.zeros((nmax + 1, kmax + 1), dtype=np.int64)
    for n in range(nmax + 1):
        for k in range(min(n, kmax) + 1):
            table[n, k] = comb(n, k)
    return table


@numba.njit(cache=True)
def _rank_monotone(n, N, binom):
    """Combinatorial rank of a monotone state, or -1 if ``n`` is not one."""
    b = n.shape[0]
    r = 0
    prev = N
    for k in range(b):
        v = n[k]
        if v < 0 or v > prev:
            return -1
        prev = v
        r += binom[v + b - 1 - k, b - k]
    return r


@numba.njit(cache=True)
def _enumerate_monotone(N, b, binom, total):
    out = np.empty((total, b), dtype=np.int64)
    n = np.zeros(b, dtype=np.int64)
    while True:
        out[_rank_monotone(n, N, binom)] = n
        # odometer on non-increasing sequences: bump the last coordinate that can grow
        k = b - 1
        while k >= 0:
            cap = N if k == 0 else n[k - 1]
            if n[k] < cap:
                break
            k -= 1
        if k < 0:
            return out
        n[k] += 1
        for j in range(k + 1, b):
            n[j] = 0


def monotone_states(N: int, b: int) -> StateSpace:
    """Enumerate ``N >= n_1 >= ... >= n_b >= 0`` in level order (vectorised/compiled).

    Parameters
    ----------
    N:
        Number of servers.
    b:
        Buffer size (state dimension).
    """
    total = count_monotone(N, b)
    binom = _binom_table(N + b, b)
    by_rank = _enumerate_monotone(N, b, binom, total)
    order = np.argsort(by_rank.sum(axis=1), kind="stable")
    return StateSpace(N=N, states=np.ascontiguousarray(by_rank[order]))
