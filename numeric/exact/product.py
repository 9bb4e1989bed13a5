"""The exact stationary law of a heterogeneous population: the product chain.

The state is the tuple of the K objects' states, coded as ``sum_k s_k S^k``
(``S^K`` states).  Object ``k`` moves ``s -> s'`` at ``A[k, s, s']``; an ordered
pair ``(k, k1)`` of distinct objects in ``(s, s1)`` jumps to ``(s', s1')`` at
``B[k, k1, s, s1, s', s1']``.  ``pi`` solves ``pi Q = 0``, ``sum pi = 1``
(float64, :func:`stationary`); its residual ``||pi Q||_1`` is reported.
:func:`exact_heterogeneous` is what ``numeric.exact.solve`` runs for such a model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np

from mfstein.ground.errors import NumericalError, ParameterError
from numeric.heterogeneous.rates import Rates

if TYPE_CHECKING:
    from derive.heterogeneous_population import HeterogeneousModel
    from numeric.heterogeneous.result import HeterogeneousExact

#: Most states of the product chain (``S^K``; its moments are dense in the states).
MAX_STATES = 500_000
#: Largest chain solved by sparse LU.
DIRECT_STATES = 2_000
#: Target of ``||pi Q||_1`` relative to the largest exit rate.
TOL = 1e-13


def generator(R: Rates) -> tuple[object, np.ndarray]:
    """The sparse generator ``Q`` (CSR, rows sum to 0) and each state's digits ``(states, K)``."""
    import scipy.sparse as sps

    K, S = R.K, R.S
    n = S**K
    index = np.arange(n, dtype=np.int64)
    power = S ** np.arange(K, dtype=np.int64)
    digits = (index[:, None] // power[None, :]) % S
    rows, cols, vals = [], [], []
    for (i, j), a in zip(R.uni, R.a, strict=True):
        k, s, t = i // S, i % S, j % S
        hit = index[digits[:, k] == s]
        rows.append(hit)
        cols.append(hit + (t - s) * power[k])
        vals.append(np.full(hit.size, float(a)))
    for (i1, i2, j1, j2), b in zip(R.pair, R.b, strict=True):
        k, s, k1, s1 = i1 // S, i1 % S, i2 // S, i2 % S
        hit = index[(digits[:, k] == s) & (digits[:, k1] == s1)]
        rows.append(hit)
        cols.append(hit + (j1 % S - s) * power[k] + (j2 % S - s1) * power[k1])
        vals.append(np.full(hit.size, float(b)))
    if R.avg is not None:
        _averaged_moves(R, digits, index, power, rows, cols, vals)
    r = np.concatenate(rows) if rows else index[:0]
    c = np.concatenate(cols) if cols else index[:0]
    v = np.concatenate(vals) if vals else np.zeros(0)
    Q = sps.csr_matrix((v, (r, c)), shape=(n, n))
    Q = Q - sps.diags(np.asarray(Q.sum(axis=1)).ravel())
    return Q.tocsr(), digits


def _averaged_moves(
    R: Rates,
    digits: np.ndarray,
    index: np.ndarray,
    power: np.ndarray,
    rows: list,
    cols: list,
    vals: list,
) -> None:
    """Append the averaged moves (rates functions of the occupancy averages,
    :mod:`numeric.heterogeneous.averaged`) of every state where they can fire."""
    av = R.avg
    K, S = R.K, R.S
    counts = np.stack([(digits == u).sum(axis=1) for u in range(S)], axis=1).astype(float)
    for m in range(av.size):
        k, s, t = int(av.obj[m]), int(av.src[m] % S), int(av.dst[m] % S)
        hit = index[digits[:, k] == s]
        c = counts[hit]
        mine = np.zeros(S)
        mine[s] = 1.0
        args = [*(c / K).T, *(((c - mine) / (K - 1)).T if K > 1 else np.zeros_like(c).T)]
        rate = np.array(
            np.broadcast_to(np.asarray(av.funcs[av.group[m]](*args)[0], dtype=float), hit.shape)
        )
        # a polynomial rate that vanishes at a state may round to -1e-17 there
        rate[(rate < 0) & (rate > -1e-12 * max(1.0, float(np.max(np.abs(rate), initial=0))))] = 0
        if np.any(~np.isfinite(rate)) or np.any(rate < 0):
            raise ParameterError(
                f"the rate of object {k} moving {s} -> {t} must be a finite number >= 0 in "
                "every state of the exact chain."
            )
        rows.append(hit)
        cols.append(hit + (t - s) * power[k])
        vals.append(np.array(rate, dtype=float))


def stationary(R: Rates) -> tuple[np.ndarray, np.ndarray, float, Any]:
    """``(pi, digits, residual, system)`` of the product chain: sparse LU up to
    :data:`DIRECT_STATES` states, preconditioned BiCGSTAB beyond
    (:mod:`numeric.exact.solvers`; LU fills in badly once every pair interacts);
    ``system`` is the pinned system kept for the law's error
    (:func:`numeric.exact.law_error.kept_system`)."""
    from numeric.exact.law_error import kept_system
    from numeric.exact.solvers import solve_direct, solve_krylov

    n = R.S**R.K
    if n > MAX_STATES:
        raise ParameterError(
            f"N (the number of objects K = {R.K}) is too large for the exact chain: it has "
            f"{R.S}^{R.K} states, at most {MAX_STATES:,} allowed."
        )
    Q, digits = generator(R)
    QT = Q.T.tocsr()
    if n <= DIRECT_STATES:
        law = solve_direct(QT, 0)
    else:
        law = solve_krylov(QT, 0, tol=TOL * max(1.0, float(np.max(-Q.diagonal()))))
    scale = max(1.0, float(np.max(-Q.diagonal()))) if n > 1 else 1.0
    if not np.all(np.isfinite(law.pi)) or law.residual > 1e3 * TOL * scale:
        raise NumericalError(
            "the exact chain of the heterogeneous population has no unique stationary law "
            f"to float64 precision (residual {law.residual:.2e})."
        )
    return law.pi, digits, law.residual, kept_system(QT, 0)


def moments(pi: np.ndarray, digits: np.ndarray, S: int) -> tuple[np.ndarray, np.ndarray]:
    """``E[X]`` and ``Cov(X)`` of the indicators ``X_{k,s} = [object k in s]``."""
    n, K = digits.shape
    ind = np.zeros((n, K * S))
    ind[np.arange(n)[:, None], np.arange(K)[None, :] * S + digits] = 1.0
    mean = pi @ ind
    second = ind.T @ (pi[:, None] * ind)
    return mean, second - np.outer(mean, mean)


def exact_heterogeneous(
    model: HeterogeneousModel, params: Mapping[str, Any] | None, *, N: Any
) -> HeterogeneousExact:
    """The product chain of the K objects; ``N`` must equal ``K``."""
    from mfstein.ground.errors import check_int
    from numeric.heterogeneous.entry import rates
    from numeric.heterogeneous.result import HeterogeneousExact

    N = check_int("N", N, 1)
    if N != model.K:
        raise ParameterError(
            f"N must be the number of objects K = {model.K} of the heterogeneous population, "
            f"got {N}."
        )
    with mpmath.workdps(30):
        R, inputs = rates(model, params, float64=True)
    pi, digits, residual, system = stationary(R)
    mean, cov = moments(pi, digits, model.S)
    return HeterogeneousExact(
        model.name,
        model.K,
        model.S,
        inputs,
        len(pi),
        residual,
        mean,
        cov,
        pi,
        system,
        object_names=model.object_names,
        state_names=model.state_names,
    )
