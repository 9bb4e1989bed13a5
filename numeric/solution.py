"""The result record of :func:`numeric.solve` and :func:`numeric.bound`."""

from __future__ import annotations

from dataclasses import dataclass, field

import mpmath
from mpmath import mpf


@dataclass
class MeanFieldSolution:
    """Mean-field equilibrium, Stein/Lyapunov solution and Theorem 1's constant.

    Attributes
    ----------
    lam, b, d, dps:
        Arrival rate, buffer used (for ``b = "auto"``/``"inf"`` the size actually
        used), choices, requested significant digits.
    s_star:
        Fixed point ``s*_1 .. s*_b``.
    J, ftilde, Q:
        Jacobian at ``s*``, the paper's ``f~(s*)`` and ``Q(s*) = 2 diag(f~)``.
    P:
        Solution of ``P J + J^T P = -M`` (Stein's equation for the linearised model).
    W:
        Solution of ``J W + W J^T + Q = 0`` (Ornstein--Uhlenbeck covariance).
    V:
        Refined mean-field bias, ``E[S] ~ s* + V/N``.
    eigenvalues:
        Eigenvalues of ``J(s*)``, ascending (real and negative).
    constant:
        ``c = tr(P Q) = tr(M W)``; for ``M = I`` this is ``2 tr(P F~)`` of seed 000
        Theorem 1 (with the sign fixed), so ``E||S - s*||^2 ~ c/N``.
    digits:
        Correct significant digits claimed for ``constant`` (all routes and two
        working precisions agree to at least this many).
    methods:
        Route name -> value of ``constant`` computed by that route (decimal string).
    """

    lam: mpf
    b: int
    d: int
    dps: int
    s_star: list[mpf]
    J: mpmath.matrix
    ftilde: list[mpf]
    Q: mpmath.matrix
    P: mpmath.matrix
    W: mpmath.matrix
    V: list[mpf]
    eigenvalues: list[mpf]
    constant: mpf
    digits: int
    methods: dict[str, str] = field(default_factory=dict)
