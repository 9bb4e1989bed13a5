"""The generator matrix of the finite-N chain, assembled from a model's transitions.

For a density-dependent population process with transitions ``l`` and
intensities ``beta_l(s)`` (the core paper, Section 3), the finite-N chain on
``n = N s`` jumps ``n -> n + l`` at rate ``N beta_l(n / N)``.  The generator is

    Q[n, n + l] = N beta_l(n / N),    Q[n, n] = -sum_l N beta_l(n / N).

The intensities come from the model's generated numba kernel ``rates_into``
(one source of truth: :mod:`derive.kernels`), evaluated for all states by one
small compiled loop; the assembly loop is compiled once and cached.

References
----------
.. [1] "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices
   Mean-Field Model in Heavy-Traffic" (the core paper; its authors are not
   named in the copy the project works from).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sps

from mfstein.errors import ParameterError
from mfstein.jit import numba
from numeric.exact.states import StateSpace, index_of, rates_batch


@numba.njit(cache=True)
def _assemble(states, R, N, mode, keys, lookup, binom, jumps, arrival):
    S, b = states.shape
    nt = jumps.shape[0]
    rows = np.empty(S * nt, dtype=np.int64)
    cols = np.empty(S * nt, dtype=np.int64)
    vals = np.empty(S * nt)
    exit_rate = np.zeros(S)
    arrivals = np.zeros(S)
    m = np.empty(b, dtype=np.int64)
    nnz = 0
    for i in range(S):
        for t in range(nt):
            r = R[i, t]
            if r == 0.0:
                continue
            if not r > 0.0:
                # negative or NaN intensity: report the state to the caller
                return rows[:0], cols[:0], vals[:0], exit_rate, arrivals, i, t
            for k in range(b):
                m[k] = states[i, k] + jumps[t, k]
            j = index_of(m, N, mode, keys, lookup, binom)
            if j < 0:
                return rows[:0], cols[:0], vals[:0], exit_rate, arrivals, i, -1 - t
            rows[nnz] = i
            cols[nnz] = j
            vals[nnz] = N * r
            nnz += 1
            exit_rate[i] += N * r
            if arrival[t]:
                arrivals[i] += r
    return rows[:nnz], cols[:nnz], vals[:nnz], exit_rate, arrivals, -1, 0


def assemble(
    space: StateSpace, kern, p: np.ndarray
) -> tuple[sps.csr_matrix, np.ndarray, np.ndarray]:
    """Assemble the transposed generator ``Q^T`` (CSR) on ``space``.

    Parameters
    ----------
    space:
        The enumerated states.
    kern:
        Numba kernels of the model (``jumps``, ``rates_into``).
    p:
        Parameter values in the model's order.

    Returns
    -------
    QT:
        ``Q^T`` as a CSR matrix (row ``i`` holds the rates *into* state ``i``,
        with the diagonal ``-q_i``), the form the balance equations
        ``Q^T pi = 0`` are solved in.
    exit_rate:
        ``q_i = -Q[i, i]``.
    arrival_intensity:
        ``sum_l beta_l(n_i / N)`` over the transitions that raise the total
        ``sum(l) > 0`` (arrivals that are accepted), per state.

    Raises
    ------
    ParameterError
        If some intensity is negative or NaN, or a transition of positive rate
        leaves the state space.
    """
    jumps = np.ascontiguousarray(kern.jumps, dtype=np.int64)
    arrival = jumps.sum(axis=1) > 0
    p = np.asarray(p, dtype=np.float64)
    R = rates_batch(space.states, space.N, kern.rates_into, p, jumps.shape[0])
    rows, cols, vals, exit_rate, arrivals, bad, t = _assemble(
        space.states,
        R,
        space.N,
        space.mode,
        space.keys,
        space.lookup,
        space.binom,
        jumps,
        arrival,
    )
    del R
    if bad >= 0:
        state = space.states[bad].tolist()
        if t >= 0:
            raise ParameterError(
                f"transition {jumps[t].tolist()} has a negative or undefined rate at state "
                f"{state}; the parameters {p.tolist()} are outside the model's range."
            )
        raise ParameterError(
            f"transition {jumps[-1 - t].tolist()} leaves the state space from state {state} "
            "with positive rate; the model does not live on this lattice."
        )
    S = space.size
    # rows come out in state order, so the off-diagonal part of Q is CSR already
    indptr = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=S), out=indptr[1:])
    off = sps.csr_matrix((vals, cols, indptr), shape=(S, S))
    del rows, cols, vals
    QT = (off.T - sps.diags(exit_rate)).tocsr()
    QT.sort_indices()
    return QT, exit_rate, arrivals
