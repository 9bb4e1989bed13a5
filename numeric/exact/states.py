"""State spaces of finite-N population processes on the lattice ``{0..N}^b``.

The finite-N chain of a density-dependent population process lives on integer
vectors ``n = N s``.  Two state spaces are provided:

* :func:`monotone_states` -- the supermarket state space of the core paper, Section 3:
  ``N >= n_1 >= n_2 >= ... >= n_b >= 0`` (``n_k`` = number of servers holding at
  least ``k`` jobs).  It has ``C(N + b, b)`` points and a closed-form ranking by
  the combinatorial number system: with ``c_k = n_k + b - k`` (strictly
  decreasing), ``rank(n) = sum_k C(c_k, b - k + 1)`` is a bijection onto
  ``0 .. C(N + b, b) - 1``.
* :func:`reachable_states` -- for any model: the states reachable from a start
  state through transitions of positive rate, found by breadth-first search on
  mixed-radix codes ``sum_k n_k (N + 1)^(k-1)``.

Both return the states sorted by *level* (total ``sum_k n_k``), the ordering in
which arrivals (+1) and departures (-1) make the generator block tridiagonal,
together with a numba-callable way of finding the index of any state.

References
----------
.. [1] "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices
   Mean-Field Model in Heavy-Traffic" (the core paper; its authors are not
   named in the copy the project works from).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from mfstein.errors import ParameterError
from mfstein.jit import numba

#: Mode flags of :class:`StateSpace` (how the generator assembly finds an index).
RANK_MONOTONE = 0
RANK_CODES = 1


@dataclass
class StateSpace:
    """An enumerated state space, in level order.

    Attributes
    ----------
    N:
        Lattice size (each coordinate lies in ``0..N``).
    states:
        ``(S, b)`` int64 array of the states ``n``, sorted by level ``sum(n)``.
    mode:
        :data:`RANK_MONOTONE` (combinatorial ranking; ``lookup[rank] = index``)
        or :data:`RANK_CODES` (``keys`` are the sorted mixed-radix codes and
        ``lookup[j]`` the index of the state with code ``keys[j]``).
    keys, lookup, binom:
        Arrays used by the compiled index lookup (see :func:`index_of`).
    """

    N: int
    states: np.ndarray
    mode: int
    keys: np.ndarray
    lookup: np.ndarray
    binom: np.ndarray

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
    lookup = np.empty(total, dtype=np.int64)
    lookup[order] = np.arange(total, dtype=np.int64)
    return StateSpace(
        N=N,
        states=np.ascontiguousarray(by_rank[order]),
        mode=RANK_MONOTONE,
        keys=np.zeros(0, dtype=np.int64),
        lookup=lookup,
        binom=binom,
    )


@numba.njit(cache=True)
def _code(n, radix):
    c = 0
    w = 1
    for k in range(n.shape[0]):
        c += n[k] * w
        w *= radix
    return c


@numba.njit
def rates_batch(states, N, rates_into, p, nt):
    """``R[i, t] = beta_t(states[i] / N)`` from the model's compiled kernel.

    The only compiled loop specialised to a model (it calls that model's
    ``rates_into``); everything else is compiled once and cached.
    """
    S, b = states.shape
    R = np.empty((S, nt))
    s = np.empty(b)
    for i in range(S):
        for k in range(b):
            s[k] = states[i, k] / N
        rates_into(s, p, R[i])
        # a rate that is zero in exact arithmetic can come out as -1e-16 (e.g. the
        # product (N s - j) / (N - j) of sampling without replacement at s = n/N):
        # rounding-level negatives are zeros, larger ones are reported by assemble
        scale = 1.0
        for t in range(nt):
            if abs(R[i, t]) > scale:
                scale = abs(R[i, t])
        for t in range(nt):
            if R[i, t] < 0.0 and R[i, t] > -256.0 * 2.220446049250313e-16 * scale:
                R[i, t] = 0.0
    return R


def _bfs(start, N, jumps, rates_into, p, max_states):
    """Level-synchronous breadth-first search on mixed-radix codes (vectorised)."""
    radix = N + 1
    found = [start[None, :]]
    seen = _codes(start[None, :], radix)
    frontier = start[None, :]
    count = 1
    while frontier.shape[0]:
        R = rates_batch(frontier, N, rates_into, p, jumps.shape[0])
        rows, ts = np.nonzero(R > 0.0)
        targets = frontier[rows] + jumps[ts]
        inside = np.all((targets >= 0) & (targets <= N), axis=1)
        targets = targets[inside]
        codes, first = np.unique(_codes(targets, radix), return_index=True)
        fresh = ~np.isin(codes, seen, assume_unique=True)
        frontier = targets[first[fresh]]
        count += frontier.shape[0]
        if count > max_states:
            return frontier[:0], -1
        seen = np.union1d(seen, codes[fresh])
        found.append(frontier)
    return np.concatenate(found), count


def reachable_states(kern, N: int, p: np.ndarray, start, max_states: int) -> StateSpace:
    """States reachable from ``start`` through transitions of positive rate.

    Jumps leaving the lattice ``{0..N}^b`` are not followed here; the generator
    assembly then rejects the model (positive rate off the lattice).

    Parameters
    ----------
    kern:
        Numba kernels of the model (``jumps`` and ``rates_into``).
    N:
        Lattice size.
    p:
        Parameter values in the model's order.
    start:
        A state (``b`` integers in ``0..N``).
    max_states:
        Stop with :class:`ParameterError` once more states than this are found.
    """
    b = kern.b
    if (N + 1) ** b >= 2**62:
        raise ParameterError(
            f"the lattice {{0..N}}^b with N={N}, b={b} is too large to index by codes; "
            "it needs (N + 1)^b < 2^62."
        )
    start = np.asarray(start, dtype=np.int64)
    if start.shape != (b,) or start.min() < 0 or start.max() > N:
        raise ParameterError(f"start must be {b} integers in 0..{N}, got {start.tolist()}.")
    states, count = _bfs(
        start, N, np.asarray(kern.jumps, dtype=np.int64), kern.rates_into, p, max_states
    )
    if count < 0:
        raise ParameterError(
            f"the state space reachable from {start.tolist()} has more than "
            f"{max_states:,} states, above the memory limit."
        )
    return code_space(states, N)[0]


def code_space(states: np.ndarray, N: int) -> tuple[StateSpace, np.ndarray]:
    """The :data:`RANK_CODES` state space of ``states`` (level order) and the
    permutation ``order`` that sorted them (``space.states == states[order]``)."""
    order = np.lexsort((_codes(states, N + 1), states.sum(axis=1)))
    states = np.ascontiguousarray(states[order])
    codes = _codes(states, N + 1)
    by_code = np.argsort(codes)
    space = StateSpace(
        N=N,
        states=states,
        mode=RANK_CODES,
        keys=np.ascontiguousarray(codes[by_code]),
        lookup=by_code.astype(np.int64),
        binom=np.zeros((1, 1), dtype=np.int64),
    )
    return space, order


def _codes(states: np.ndarray, radix: int) -> np.ndarray:
    weights = radix ** np.arange(states.shape[1], dtype=np.int64)
    return states @ weights


@numba.njit(cache=True)
def index_of(n, N, mode, keys, lookup, binom):
    """Index of state ``n`` in a :class:`StateSpace`, or -1 if it is not a state."""
    for k in range(n.shape[0]):
        if n[k] < 0 or n[k] > N:
            return -1
    if mode == RANK_MONOTONE:
        r = _rank_monotone(n, N, binom)
        return -1 if r < 0 else lookup[r]
    c = _code(n, N + 1)
    j = np.searchsorted(keys, c)
    if j < keys.shape[0] and keys[j] == c:
        return lookup[j]
    return -1
