"""Steady state of a heterogeneous population: fixed point, covariance, refined term.

Allmeier and Gast ("Mean field and refined mean field approximations for
heterogeneous systems: it works!", SIGMETRICS 2022): with ``J`` the Jacobian of
the drift at the fixed point ``x*`` and ``Q`` the noise there, the covariance
``W`` of the K objects' indicators solves ``J W + W J^T + Q = 0`` (its
cross-object entries are ``O(1/K)``), and since ``E[f(X)] = 0`` in the steady
state and ``f`` is quadratic, ``J (E X - x*) + sum_pairs b W[i1, i2] l = O(1/K^2)``:

    E[X_{k,s}] = x*_{k,s} + V_{k,s} / K + O(1/K^2),
    V = -K J^{-1} sum_pairs b W[i1, i2] l.

Everything is solved in reduced coordinates (:mod:`numeric.heterogeneous.algebra`),
where ``J`` is invertible at a hyperbolic fixed point.  The 1/K^2 term is not
given: the theory of the paper stops at order 1 for K distinct objects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import scipy.linalg  # noqa: F401  (loaded before limited_blas() scans the BLAS libraries)

from mfstein.ground.errors import NumericalError
from numeric.heterogeneous import algebra as alg
from numeric.heterogeneous.rates import Rates

#: Most Newton steps of a fixed-point search.
NEWTON_STEPS = 60


@dataclass
class Steady:
    """``x*``, ``V`` (the refined term times K) and ``W`` (``Cov(X)`` to first order),
    all in ``K x S`` coordinates; float64 arrays or object arrays of ``mpf``."""

    x: np.ndarray
    V: np.ndarray
    W: np.ndarray
    condition: float
    agreement: int = 16


def reduced_drift(R: Rates, x: np.ndarray) -> np.ndarray:
    """The drift on the reduced coordinates."""
    return alg.drift(R, x)[alg.kept(R.K, R.S)]


def continuation_point64(R: Rates, x0: np.ndarray) -> np.ndarray:
    """The fixed point the mean-field ODE reaches from ``x0``, float64.

    Pseudo-transient continuation: implicit Euler steps ``(I/h - J) dy = f``
    whose step ``h`` grows as the drift falls (``h -> inf`` is Newton's method),
    so the iterates follow the ODE's path into its basin and end quadratically.
    """
    K, S = R.K, R.S
    x = alg.on_simplex(np.asarray(x0, dtype=float), K, S)
    scale = 1.0 + float(np.max(alg.frozen(R, x).a, initial=0) + np.max(R.b, initial=0) * K)
    h, prev = 1.0 / scale, None
    eye = np.eye(K * (S - 1))
    for _ in range(NEWTON_STEPS * 4):
        f = reduced_drift(R, x)
        size = float(np.max(np.abs(f), initial=0))
        if prev is not None:
            h = min(h * max(prev / max(size, 1e-300), 0.5), 1e16)
        prev = size
        J = alg.reduce_jacobian(alg.jacobian(R, x), K, S)
        step = np.linalg.solve(eye / h - J, f)
        x = x + alg.expand_vector(step, K, S)
        if np.max(np.abs(step), initial=0) < 1e-14 and h > 1e6:
            return x
    raise NumericalError(
        "the mean-field ODE of the heterogeneous population does not settle to a fixed point "
        "from the start."
    )


def check_hurwitz(Jr: np.ndarray) -> float:
    """The condition number of ``Jr``; refuse a fixed point that is not stable."""
    eig = np.linalg.eigvals(Jr) if Jr.size else np.zeros(0)
    if eig.size and np.max(eig.real) >= 0:
        raise NumericalError(
            "the fixed point of the heterogeneous population is not stable (its Jacobian has "
            f"an eigenvalue with real part {np.max(eig.real):.3g} >= 0); no expansion there."
        )
    return float(np.linalg.cond(Jr)) if Jr.size else 1.0


def _covariance_and_bias(R: Rates, x: np.ndarray, Jr: np.ndarray, Qr: np.ndarray,
                         d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(W, V)`` in float64, solved in coordinates scaled by ``diag(d)`` (``d = 1``:
    as they are; another ``d`` rounds differently: the second route)."""
    from scipy.linalg import lu_factor, lu_solve, solve_continuous_lyapunov

    K, S = R.K, R.S
    Jd = Jr / d[:, None] * d[None, :]
    Wd = solve_continuous_lyapunov(Jd, -(Qr / d[:, None] / d[None, :]))
    Wr = d[:, None] * ((Wd + Wd.T) / 2) * d[None, :]
    W = alg.expand_matrix(Wr, K, S)
    g = alg.second_order(R, x, W)[alg.kept(K, S)]
    v = d * lu_solve(lu_factor(Jd), g / d)
    return W, alg.expand_vector(-K * v, K, S)


def steady64(R: Rates, x0: np.ndarray) -> Steady:
    """The float64 route: ODE, Newton, Lyapunov (Bartels-Stewart), linear solve;
    ``W`` and ``V`` twice (:func:`_covariance_and_bias`) for :func:`float64_digits`."""
    K, S = R.K, R.S
    x = continuation_point64(R, x0)
    Jr = alg.reduce_jacobian(alg.jacobian(R, x), K, S)
    cond = check_hurwitz(Jr)
    keep = alg.kept(K, S)
    Qr = alg.noise(R, x)[np.ix_(keep, keep)]
    W, V = _covariance_and_bias(R, x, Jr, Qr, np.ones(len(keep)))
    W2, V2 = _covariance_and_bias(R, x, Jr, Qr, 1 + 0.3 * np.sin(np.arange(len(keep)) + 1.0))
    return Steady(x, V, W, cond, min(_agree(V, V2), _agree(W.ravel(), W2.ravel())))


def _agree(a: np.ndarray, b: np.ndarray) -> int:
    """Significant digits (norm-wise) on which two float64 arrays agree."""
    diff = float(np.max(np.abs(a - b), initial=0))
    scale = float(np.max(np.abs(a), initial=0))
    return 16 if diff == 0 or scale == 0 else math.floor(-math.log10(diff / scale))


def _mp_matrix(a: np.ndarray) -> mpmath.matrix:
    return mpmath.matrix(a.tolist())


def _mp_array(m: Any, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    flat = out.reshape(-1)
    rows = m.rows if isinstance(m, mpmath.matrix) else len(m)
    if isinstance(m, mpmath.matrix) and m.cols > 1:
        for i in range(rows):
            for j in range(m.cols):
                flat[i * m.cols + j] = m[i, j]
    else:
        flat[:] = [m[i] for i in range(rows)]
    return out


def newton_mp(R: Rates, x64: np.ndarray, R64: Rates | None = None) -> np.ndarray:
    """``x*`` at the working precision: chord iterations with the float64 Jacobian
    on exact residuals (each step gains about 16 - log10(cond) digits)."""
    from scipy.linalg import lu_factor, lu_solve

    K, S = R.K, R.S
    if R64 is None:
        R64 = Rates(K, S, R.uni, R.a.astype(float), R.pair, R.b.astype(float))
    lu = lu_factor(alg.reduce_jacobian(alg.jacobian(R64, x64), K, S))
    x = alg.on_simplex(np.array([mpmath.mpf(float(v)) for v in x64], dtype=object), K, S)
    tol = mpmath.ldexp(1, -mpmath.mp.prec + 4)
    prev = None
    for _ in range(NEWTON_STEPS):
        f = reduced_drift(R, x)
        size = max((abs(v) for v in f), default=mpmath.mpf(0))
        if size <= tol:
            return x
        if prev is not None and size >= prev:
            raise NumericalError(
                "the heterogeneous fixed point stopped converging at the working precision "
                "(too ill-conditioned for float64 corrections)."
            )
        prev = size
        step = lu_solve(lu, np.array([float(v) for v in f]))
        x = x - alg.expand_vector(np.array([mpmath.mpf(float(v)) for v in step], dtype=object),
                                  K, S)
    raise NumericalError("the heterogeneous fixed point did not converge at the working precision.")


def steady_mp(R: Rates, x64: np.ndarray, R64: Rates | None = None) -> Steady:
    """The route at the working precision of :data:`mpmath.mp` (``R`` holds ``mpf``):
    iterative refinement of every solve (:mod:`numeric.linalg.refinement`); ``R64``
    the same rates in float64 (needed when ``R`` has averaged moves)."""
    from numeric.linalg.refinement import lyapunov_refined, solve_linear

    K, S = R.K, R.S
    x = newton_mp(R, x64, R64)
    keep = alg.kept(K, S)
    Jr = alg.reduce_jacobian(alg.jacobian(R, x), K, S)
    cond = check_hurwitz(Jr.astype(float))
    Qr = alg.noise(R, x)[np.ix_(keep, keep)]
    n = len(keep)
    Wr = _mp_array(lyapunov_refined(_mp_matrix(Jr), _mp_matrix(Qr)), (n, n))
    W = alg.expand_matrix(Wr, K, S)
    g = alg.second_order(R, x, W)[keep]
    v = solve_linear(_mp_matrix(Jr), list(-K * g))
    V = alg.expand_vector(np.array(v, dtype=object), K, S)
    return Steady(x, V, W, cond)


def float64_digits(st: Steady) -> int:
    """Digits a float64 steady state claims: one less than the two routes agree on
    and than ``16 - log10(cond J)``, within 1..14."""
    by_condition = math.floor(16 - math.log10(max(st.condition, 1.0)))
    return int(max(1, min(14, by_condition - 1, st.agreement - 1)))
