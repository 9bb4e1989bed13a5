"""The transient of a heterogeneous population to order 1 (Allmeier and Gast, 2022).

With ``x(0)`` each object's initial law (independent objects, so ``W(0)`` is the
block-diagonal Bernoulli covariance, zero for a deterministic start):

    x' = f(x),   W' = J W + W J^T + Q(x),   v' = J v + sum_pairs b W[i1, i2] l,

and ``E[X_{k,s}(t)] = x(t) + V(t)/K + O(1/K^2)`` with ``V = K v``.  The float64
route integrates this system on the ``K x S`` coordinates (``solve_ivp``, the
``n + n + n^2`` unknowns), twice, with ``rtol`` and ``rtol/100``, and states the
digits on which the two agree.  The route at any precision (``dps``) is
:mod:`numeric.expansion.transient_heterogeneous` (fixed-point integers, extrapolation),
averaged moves included.  :func:`expand_result` maps a result of
:func:`numeric.expansion.transient.transient` on
:func:`derive.heterogeneous_population.as_density_model` (whose ``V`` is ``v``) back to
these coordinates: an independent route for small K.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import mpmath
import numpy as np

from numeric.heterogeneous import algebra as alg
from numeric.heterogeneous.rates import Rates


def initial_covariance(x0: np.ndarray, K: int, S: int) -> np.ndarray:
    """``Cov(X(0))`` of independent objects with laws ``x0``: block-diagonal."""
    W = np.zeros((K * S, K * S))
    for k in range(K):
        p = x0[k * S:(k + 1) * S]
        W[k * S:(k + 1) * S, k * S:(k + 1) * S] = np.diag(p) - np.outer(p, p)
    return W


def _rhs(R: Rates, z: np.ndarray) -> np.ndarray:
    n = R.n
    x, v, W = z[:n], z[n:2 * n], z[2 * n:].reshape(n, n)
    J = alg.jacobian(R, x)
    JW = J @ W
    dW = JW + JW.T + alg.noise(R, x)
    dv = J @ v + alg.second_order(R, x, W)
    return np.concatenate([alg.drift(R, x), dv, dW.ravel()])


def integrate64(R: Rates, x0: np.ndarray, times: np.ndarray, rtol: float,
                atol: float, integrator: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``x(t)``, ``V(t) = K v(t)`` and ``W(t)`` at ``times`` (float64, by SciPy's
    ``solve_ivp`` with the named ``integrator``)."""
    from scipy.integrate import solve_ivp

    n = R.n
    z0 = np.concatenate([x0, np.zeros(n), initial_covariance(x0, R.K, R.S).ravel()])
    if times[-1] == 0:
        Z = np.repeat(z0[:, None], len(times), axis=1)
    else:
        sol = solve_ivp(lambda _t, z: _rhs(R, z), (0.0, float(times[-1])), z0,
                        method=integrator, t_eval=times, rtol=rtol, atol=atol)
        if not sol.success:
            from mfstein.ground.errors import NumericalError

            raise NumericalError(f"the heterogeneous transient failed to integrate: {sol.message}")
        Z = sol.y
    m = len(times)
    x = Z[:n].T
    V = R.K * Z[n:2 * n].T
    W = Z[2 * n:].T.reshape(m, n, n)
    return x, V, W


def agreement64(a: np.ndarray, b: np.ndarray) -> int:
    """Digits (norm-wise, over every time) on which two float64 runs agree, at most 14."""
    diff = float(np.max(np.abs(a - b), initial=0))
    scale = float(np.max(np.abs(a), initial=0))
    if diff == 0 or scale == 0:
        return 14
    return int(max(0, min(14, np.floor(-np.log10(diff / scale)))))


def expand_result(tr: Any, K: int, S: int, names: list[str]) -> Any:
    """A :class:`numeric.expansion.transient.TransientResult` of
    :func:`~derive.heterogeneous_population.as_density_model` on the ``K x S``
    coordinates: ``x`` completed, ``V`` times ``K``, ``W`` completed; the error
    of a completed entry is the sum of the errors it is made of.  The completions
    run at twice the route's digits (at the default 15 digits they would round the
    last state of every object to float64's precision)."""
    with mpmath.workdps(2 * (tr.dps or 15) + 20):
        return _expand(tr, K, S, names)


def _expand(tr: Any, K: int, S: int, names: list[str]) -> Any:
    def vec(a: np.ndarray, err: bool = False) -> np.ndarray:
        if err:
            return np.array([np.abs(alg.expand_vector(np.abs(r), K, S)) for r in a])
        return np.array([alg.expand_vector(r, K, S) for r in a])

    def mat(a: np.ndarray, err: bool = False) -> np.ndarray:
        if err:
            return np.array([np.abs(alg.expand_matrix(np.abs(w), K, S)) for w in a])
        return np.array([alg.expand_matrix(w, K, S) for w in a])

    x = vec(tr.x)
    x[:, S - 1::S] += 1  # the last probability: one minus the others
    V = K * vec(tr.V)
    W = mat(tr.W)
    errors = {}
    if tr.errors:
        errors = {"x": vec(tr.errors["x"], True), "V": K * vec(tr.errors["V"], True),
                  "W": mat(tr.errors["W"], True)}
    return dataclasses.replace(
        tr, x=x, V=V, W=W, errors=errors, states=names, limit=None,
        free=names, notes=[*tr.notes, f"heterogeneous population of K = {K} objects: V = K v"],
    )
