"""Independent references for the tail tests, built here from the model's definition.

* :func:`jsq_reference`: the JSQ chain on sorted queue-length vectors (no phase
  truncation at all; queues capped at ``qmax``, arrivals blocked only when every
  queue holds ``qmax``), solved by sparse LU -- a route sharing no code with the
  QBD.
* :func:`birth_death`: stationary law of a birth-death chain by the product of
  rate ratios, truncated where the terms are negligible.
* :func:`ssq_truncated`: the SSQ's transition matrix on ``{0..K}`` (jumps beyond
  ``K`` clamped) solved densely.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg


def jsq_reference(n: int, eps: float, qmax: int) -> dict:
    lam = n * (1.0 - eps)
    states = list(itertools.combinations_with_replacement(range(qmax + 1), n))
    index = {s: i for i, s in enumerate(states)}
    rows, cols, vals = [], [], []
    for i, s in enumerate(states):
        if s[0] < qmax:
            t = tuple(sorted((s[0] + 1, *s[1:])))
            rows.append(i), cols.append(index[t]), vals.append(lam)
        for pos in range(n):
            if s[pos] > 0:
                t = tuple(sorted((*s[:pos], s[pos] - 1, *s[pos + 1 :])))
                rows.append(i), cols.append(index[t]), vals.append(1.0)
    N = len(states)
    Q = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(N, N))
    Q = Q - scipy.sparse.diags(np.asarray(Q.sum(axis=1)).ravel())
    A = Q.T.tolil()
    A[0, :] = 1.0
    rhs = np.zeros(N)
    rhs[0] = 1.0
    pi = scipy.sparse.linalg.spsolve(A.tocsc(), rhs)
    q = np.array(states, dtype=float)
    qbar = q.sum(axis=1).astype(int)
    pmf = np.bincount(qbar, weights=pi)
    perp2 = ((q - q.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    return {"pmf": pmf, "perp2": pi @ perp2, "perp": np.sqrt(perp2), "pi": pi}


def birth_death(up, down, kmax: int) -> np.ndarray:
    """``pi_k proportional to prod_{j<k} up(j) / down(j+1)``, ``k = 0..kmax``."""
    w = np.ones(kmax + 1)
    for k in range(1, kmax + 1):
        w[k] = w[k - 1] * up(k - 1) / down(k)
    return w / w.sum()


def ssq_truncated(a: np.ndarray, s: np.ndarray, K: int) -> np.ndarray:
    px = np.convolve(a, s[::-1])
    off = len(s) - 1
    T = np.zeros((K + 1, K + 1))
    for i in range(K + 1):
        for j, p in enumerate(px):
            T[i, min(max(i + j - off, 0), K)] += p
    A = T.T - np.eye(K + 1)
    A[0] = 1.0
    b = np.zeros(K + 1)
    b[0] = 1.0
    return np.linalg.solve(A, b)


@pytest.fixture(scope="session")
def refs():
    return {"jsq": jsq_reference, "birth_death": birth_death, "ssq": ssq_truncated}
