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
    """An enumerated state space, in level order."""

    #: Lattice size (each coordinate lies in ``0..N``).
    N: int
    #: ``(S, b)`` int64 array of the states ``n``, sorted by level ``sum(n)``.
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


@numba.njit(cache=True)
def _level_positions(states, N, binom, total, pos):
    """Fill ``pos`` (see :func:`monotone_positions`); ``False`` when ``states`` is not
    a permutation of the monotone space."""
    S, b = states.shape
    if S != total:
        return False
    row_of = np.full(total, -1, np.int64)  # rank -> row
    starts = np.zeros(b * N + 2, np.int64)  # states below each level
    for i in range(S):
        r = _rank_monotone(states[i], N, binom)
        if r < 0 or row_of[r] >= 0:
            return False
        row_of[r] = i
        starts[states[i].sum() + 1] += 1
    for level in range(1, starts.shape[0]):
        starts[level] += starts[level - 1]
    for r in range(total):  # within a level, by rank: the order of monotone_states
        i = row_of[r]
        level = states[i].sum()
        pos[i] = starts[level]
        starts[level] += 1
    return True


def monotone_positions(states: np.ndarray, N: int) -> np.ndarray | None:
    """The position of each row of ``states`` in :func:`monotone_states` ``(N, b)``
    (level ``sum_k n_k``, then the combinatorial rank), or ``None`` when the rows are
    not exactly the monotone space ``N >= n_1 >= ... >= n_b >= 0``.

    Two compiled passes over the states (the rank, a counting sort by level) with no
    enumeration and no sort: ``ordered[pos] = states`` is ``monotone_states(N,
    b).states``; at 5.6e6 states 0.2 s, where sorting both arrays lexicographically to
    compare them took 3 s.
    """
    states = np.ascontiguousarray(states, dtype=np.int64)
    b = states.shape[1]
    total = count_monotone(N, b)
    pos = np.empty(states.shape[0], dtype=np.int64)
    if not _level_positions(states, N, _binom_table(N + b, b), total, pos):
        return None
    return pos
