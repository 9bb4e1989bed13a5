"""Small heterogeneous populations shared by the tests of :mod:`numeric.heterogeneous`."""

from __future__ import annotations

import numpy as np
import sympy as sp

from derive.heterogeneous_population import heterogeneous

BETA, EPS, GAMMA = sp.symbols("beta eps gamma")
SIS = {"beta": "1", "eps": "0.5", "gamma": "1"}


def sis(K: int, speeds: tuple[str, ...] = ("1", "3/2")) -> object:
    """SIS with objects of ``len(speeds)`` recovery classes replicated in turn:
    object ``k`` recovers at ``gamma * speeds[k % len(speeds)]``, is infected
    spontaneously at ``eps`` and by each infected other object at ``beta / K``."""
    A = np.zeros((K, 2, 2), dtype=object)
    B = np.zeros((K, K, 2, 2, 2, 2), dtype=object)
    for k in range(K):
        A[k, 0, 1] = EPS
        A[k, 1, 0] = GAMMA * sp.Rational(speeds[k % len(speeds)])
        for k1 in range(K):
            if k1 != k:
                B[k, k1, 0, 1, 1, 1] = BETA / K
    return heterogeneous(A, B, name=f"sis-{K}")


def sis_population(K: int = 3) -> object:
    """:func:`sis` as a file factory (``--model tests/hetpop_models.py:sis_population``):
    every argument with a default."""
    return sis(K)


def three_state(K: int) -> object:
    """A 3-state population with pairwise moves of both objects (a 'swap' that
    pushes a partner down), two replicated classes; numbers only."""
    A = np.zeros((K, 3, 3))
    B = np.zeros((K, K, 3, 3, 3, 3))
    for k in range(K):
        A[k, 0, 1], A[k, 1, 2] = 1.0, 0.5 + 0.5 * (k % 2)
        A[k, 2, 0], A[k, 1, 0] = 1.0, 0.25
        for k1 in range(K):
            if k1 != k:
                B[k, k1, 0, 2, 1, 1] = 1.5 / K
                B[k, k1, 1, 1, 2, 0] = 0.5 / K
    return heterogeneous(A, B, name=f"three-state-{K}")
