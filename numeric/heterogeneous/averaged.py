"""Moves whose rate depends on the occupancy averages (the general object-level form).

Object ``k`` in state ``s`` moves to ``s'`` at rate ``r(m) X_{k,s}`` where ``m``
stacks the averages ``mean[u] = (1/K) sum_j X_{j,u}`` and ``others[u] =
(1/(K-1)) sum_{j != k} X_{j,u}`` (:func:`derive.heterogeneous_population.occupancy`),
both linear in ``X``.  With ``x = E X`` and ``W = Cov(X)`` a second-order Taylor
expansion of the rate gives

    E[r(m) X_{k,s}] = r(m(x)) x_{k,s} + grad(r(m) x_{k,s}) . (E X - x)
                      + 1/2 x_{k,s} sum_{v,w} r_{vw} Cov(m_v, m_w)
                      + sum_v r_v Cov(m_v, X_{k,s}) + O(1/K^2),

since every covariance of averages is ``O(1/K)`` (K diagonal blocks of size
``O(1)`` and ``K^2`` cross-object entries of size ``O(1/K)``, each weighted by
``1/K^2``) and their third central moments are ``O(1/K^2)``.  The last two terms
are :func:`correction`; with ``r`` linear in ``others`` it is the pair term of a
pairwise model (a pair ``(k, j)`` fires at ``b X_{k,s} X_{j,s1}``).  This is the
expansion of S. Allmeier and N. Gast ("Mean field and refined mean field
approximations for heterogeneous systems: it works!", SIGMETRICS 2022) with the
pairwise rates replaced by smooth functions of the averages.

Each distinct rate expression is compiled once with its gradient and Hessian in
the ``2S`` averages (SymPy ``diff``), evaluated on float64 arrays (all the moves
that share it at once) or on ``mpf`` one move at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import sympy as sp


@dataclass(frozen=True)
class Averaged:
    """The averaged moves of a population at given parameters.

    ``obj``, ``src``, ``dst``: object and flat from/to coordinates of each move;
    ``group``: the index of its rate expression in ``funcs``; each ``funcs[g](*m)``
    returns ``[r, r_0, ..., r_{2S-1}, r_00, r_01, ..., r_{2S-1,2S-1}]`` (the upper
    triangle of the Hessian, row by row) at the ``2S`` averages ``m``; ``mp``: the
    functions take and return ``mpf``; ``exprs``: the rate expressions with the
    parameters substituted (for the simulator's polynomials)."""

    K: int
    S: int
    obj: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    group: np.ndarray
    funcs: tuple[Callable[..., Any], ...]
    mp: bool
    exprs: tuple[sp.Expr, ...]

    @property
    def size(self) -> int:
        """The number of averaged moves."""
        return len(self.src)


def averages_symbols(S: int) -> list[sp.Symbol]:
    """``mean[0..S-1]`` then ``others[0..S-1]``: the arguments of every rate function."""
    from derive.heterogeneous_population import occupancy

    mean, others = occupancy(S)
    return [*mean, *others]


def compile_rates(model: Any, values: Mapping[str, Any], *, float64: bool) -> Averaged | None:
    """The averaged moves of ``model`` with the parameters at ``values`` (``None``
    when it has none)."""
    if not model.averaged:
        return None
    K, S = model.K, model.S
    args = averages_symbols(S)
    subs = {sp.Symbol(p): sp.Float(mpmath.mpf(values[p]), mpmath.mp.dps + 5)
            if not float64 else sp.Float(float(values[p]), 17) for p in model.params}
    index: dict[sp.Expr, int] = {}
    funcs, exprs, group = [], [], []
    for _k, _s, _t, r in model.averaged:
        if r not in index:
            index[r] = len(funcs)
            e = r.xreplace(subs)
            grad = [sp.diff(e, v) for v in args]
            hess = [sp.diff(grad[i], args[j]) for i in range(2 * S) for j in range(i, 2 * S)]
            funcs.append(sp.lambdify(args, [e, *grad, *hess],
                                     modules="numpy" if float64 else "mpmath"))
            exprs.append(e)
        group.append(index[r])
    obj = np.array([k for k, *_ in model.averaged], dtype=np.int64)
    src = np.array([k * S + s for k, s, _t, _r in model.averaged], dtype=np.int64)
    dst = np.array([k * S + t for k, _s, t, _r in model.averaged], dtype=np.int64)
    return Averaged(K, S, obj, src, dst, np.array(group, dtype=np.int64), tuple(funcs),
                    not float64, tuple(exprs))


def averages(av: Averaged, x: np.ndarray) -> np.ndarray:
    """The ``2S`` averages of each move at ``x``: a ``(moves, 2S)`` array."""
    K, S = av.K, av.S
    occ = x.reshape(K, S)
    total = occ.sum(axis=0)
    mean = total / K
    out = np.empty((av.size, 2 * S), dtype=x.dtype)
    out[:, :S] = mean[None, :]
    if K > 1:
        out[:, S:] = (total[None, :] - occ[av.obj]) / (K - 1)
    else:
        out[:, S:] = 0 * mean[None, :]
    return out


#: The last :func:`derivatives` computed: ``(id of the moves, point, result)`` (the drift,
#: Jacobian, noise and correction at one point all ask for them).
_LAST: list[Any] = [None, None, None]


def derivatives(av: Averaged, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``r``, its gradient ``(moves, 2S)`` and Hessian ``(moves, 2S, 2S)`` at ``x``."""
    key = tuple(x.tolist()) if x.dtype == object else x.tobytes()
    if _LAST[0] is av and _LAST[1] == key:
        return _LAST[2]
    out = _derivatives(av, x)
    _LAST[:] = [av, key, out]
    return out


def _derivatives(av: Averaged, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m = averages(av, x)
    n = 2 * av.S
    dtype = object if av.mp else float
    values = np.empty((av.size, 1 + n + n * (n + 1) // 2), dtype=dtype)
    for g, f in enumerate(av.funcs):
        rows = np.flatnonzero(av.group == g)
        if not rows.size:
            continue
        if av.mp:
            for i in rows:
                values[i] = [mpmath.mpf(v) for v in f(*m[i])]
        else:
            block = values[rows]
            for j, v in enumerate(f(*m[rows].T)):
                block[:, j] = v  # an array, or a constant broadcast
            values[rows] = block
    hess = np.empty((av.size, n, n), dtype=dtype)
    iu = np.triu_indices(n)
    hess[:, iu[0], iu[1]] = values[:, 1 + n:]
    hess[:, iu[1], iu[0]] = values[:, 1 + n:]
    return values[:, 0], values[:, 1:1 + n], hess


def rates_at(av: Averaged, x: np.ndarray) -> np.ndarray:
    """The rate functions ``r`` of every move at ``x`` (not multiplied by ``x_src``)."""
    return derivatives(av, x)[0]


def jacobian_term(av: Averaged, x: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """``sum_moves jump (x_src d r/dx)``: the part of the Jacobian from the rates'
    dependence on the averages, ``n x n``."""
    return assemble_jacobian(av, *jacobian_weights(av, x, grad))


def jacobian_weights(av: Averaged, x: np.ndarray,
                     grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x_src d r / d x_{j,u}`` of each move as ``common[u] - own[u] [j = k]`` (``k``
    the move's object): two ``(moves, S)`` arrays."""
    K, S = av.K, av.S
    # d r / d x_{j,u} = g_mean[u]/K + g_others[u]/(K-1) [j != k]
    xs = x[av.src][:, None]
    own = grad[:, S:] / (K - 1) if K > 1 else 0 * grad[:, S:]
    return (grad[:, :S] / K + own) * xs, own * xs


def assemble_jacobian(av: Averaged, common: np.ndarray, own: np.ndarray) -> np.ndarray:
    """``sum_moves jump (x_src d r/dx)`` from :func:`jacobian_weights` (float64, ``mpf``
    or fixed-point integers alike), ``n x n``."""
    K, S = av.K, av.S
    n = K * S
    D = np.repeat(common[:, None, :], K, axis=1)  # (moves, K, S)
    D[np.arange(av.size), av.obj, :] -= own
    D = D.reshape(av.size, n)
    J = np.zeros((n, n), dtype=D.dtype)
    if D.dtype == object:
        J[...] = D.flat[0] * 0 if D.size else 0  # mpf(0) or the integer 0
    np.add.at(J, av.src, -D)
    np.add.at(J, av.dst, D)
    return J


def _object_zeros(shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    out[...] = mpmath.mpf(0)
    return out


def correction(av: Averaged, x: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``sum_moves jump c_move``, ``c`` the two covariance terms of the module's
    expansion (``E[r(m) X_src] - r(m(x)) x_src - grad . (E X - x)`` to order 1/K)."""
    return correction_of_sums(av, x, *covariance_sums(W, av.K, av.S))


def covariance_sums(W: np.ndarray, K: int, S: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sums of ``W = Cov(X)`` the correction needs: ``T[u, w] = sum_{j,j'}
    Cov(X_ju, X_j'w)``, ``C[k, u, w] = sum_j Cov(X_ju, X_kw)``, ``D[k] = Cov(X_k., X_k.)``."""
    Wb = W.reshape(K, S, K, S)
    T = Wb.sum(axis=(0, 2))
    C = Wb.sum(axis=0).transpose(1, 0, 2)
    D = Wb[np.arange(K), :, np.arange(K), :]
    return T, C, D


def correction_of_sums(av: Averaged, x: np.ndarray, T: np.ndarray, C: np.ndarray,
                       D: np.ndarray) -> np.ndarray:
    """:func:`correction` from the :func:`covariance_sums` of ``W``."""
    K, S = av.K, av.S
    n = K * S
    _r, grad, hess = derivatives(av, x)
    k, s = av.obj, av.src % S
    Ck, Dk = C[k], D[k]
    cov = np.empty((av.size, 2 * S, 2 * S), dtype=T.dtype)
    cov[:, :S, :S] = T[None] / K**2
    cross = np.empty((av.size, S), dtype=T.dtype)  # Cov(m_v, X_{k,s})
    cross_mean = Ck[np.arange(av.size), :, s] / K
    if K > 1:
        # Cov(mean_u, others_w) = (T - C_k)[u, w] / (K (K-1))
        mo = (T[None] - Ck) / (K * (K - 1))
        cov[:, :S, S:] = mo
        cov[:, S:, :S] = mo.transpose(0, 2, 1)
        Rk = Ck.transpose(0, 2, 1)  # sum_j' Cov(X_ku, X_j'w) (W symmetric)
        cov[:, S:, S:] = (T[None] - Rk - Ck + Dk) / (K - 1) ** 2
        cross_others = (Ck[np.arange(av.size), :, s] - Dk[np.arange(av.size), :, s]) / (K - 1)
    else:
        cov[:, :S, S:] = 0 * cov[:, :S, :S]
        cov[:, S:, :] = 0 * cov[:, :S, :]
        cross_others = 0 * cross_mean
    cross[:, :] = cross_mean
    cross = np.concatenate([cross, cross_others], axis=1)
    c = (hess * cov).sum(axis=(1, 2)) * x[av.src] / 2 + (grad * cross).sum(axis=1)
    out = np.zeros(n) if c.dtype != object else _object_zeros((n,))
    np.add.at(out, av.src, -c)
    np.add.at(out, av.dst, c)
    return out
