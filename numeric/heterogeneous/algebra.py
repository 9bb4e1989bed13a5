"""Drift, Jacobian, noise and pair-covariance term of a heterogeneous population.

With ``r`` the rate of a move at the point ``x`` (``a x_i`` for a unilateral
move out of ``i``, ``b x_i1 x_i2`` for a pairwise one) and ``l`` its jump
(``-e_from + e_to``, or ``-e_i1 + e_j1 - e_i2 + e_j2``), the exact drift of
the K objects is ``f(x) = sum r l``: a pair of an object with itself never
fires, so ``f`` is a quadratic polynomial and ``E[f(X)] = f(E X) +
sum b Cov(X_i1, X_i2) l`` exactly (:func:`pair_term`).  ``Q(x) = sum r l l^T``
is the noise.  Every function works on float64 arrays and on object arrays of
``mpf`` alike (the same code for both routes).

Reduced coordinates: each object's probabilities sum to one, so the last
state of each object is dropped (``y = x[k*S + s]``, ``s < S - 1``);
:func:`reduce_jacobian` is the Jacobian in ``y`` and :func:`expand_vector`,
:func:`expand_matrix` map a direction (a sum-zero vector per object) and a
covariance back to the ``K x S`` coordinates.

Moves whose rates depend on the occupancy averages (``R.avg``) enter every
function through :func:`frozen` (their rates at ``x`` as constant unilateral
rates: drift and noise) and :mod:`numeric.heterogeneous.averaged` (the
Jacobian's extra term and their part of :func:`second_order`).
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np

from numeric.heterogeneous.rates import Rates


def _zeros(n: int, like: np.ndarray) -> np.ndarray:
    if like.dtype == object:
        out = np.empty(n, dtype=object)
        out[:] = mpmath.mpf(0)
        return out
    return np.zeros(n)


def _scatter(n: int, index: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``out[index[j]] += values[j]`` for all ``j`` (a dense vector of length ``n``)."""
    if values.dtype == object:
        out = _zeros(n, values)
        np.add.at(out, index, values)
        return out
    return np.bincount(index, weights=values, minlength=n).astype(float)


#: The signs of a unilateral move's jump on its rows ``(from, to)``: ``-e_from + e_to``.
UNI_SIGNS = np.array([-1, 1])
#: The signs of a pairwise move's jump on its rows ``(i1, i2, j1, j2)``:
#: ``-e_i1 - e_i2 + e_j1 + e_j2``.
PAIR_SIGNS = np.array([-1, -1, 1, 1])


@dataclass(frozen=True)
class Jumps:
    """Rows and signs of every move's jump (:func:`jumps`): move ``m``'s jump is
    ``sum_c signs[c] e_{rows[m, c]}``."""

    #: The unilateral moves' rows ``(from, to)``, a ``(moves, 2)`` array.
    uni: np.ndarray
    #: Their signs, :data:`UNI_SIGNS`.
    uni_signs: np.ndarray
    #: The pairwise moves' rows ``(i1, i2, j1, j2)``, a ``(moves, 4)`` array.
    pair: np.ndarray
    #: Their signs, :data:`PAIR_SIGNS`.
    pair_signs: np.ndarray


UNI_SIGNS.setflags(write=False)
PAIR_SIGNS.setflags(write=False)


def jumps(R: Rates) -> Jumps:
    """Rows and signs of every move's jump of ``R``."""
    return Jumps(R.uni, UNI_SIGNS, R.pair, PAIR_SIGNS)


def frozen(R: Rates, x: np.ndarray) -> Rates:
    """``R`` with its averaged moves as unilateral ones, their rate functions taken at
    ``x`` (the same drift and noise at ``x``); ``R`` itself when it has none."""
    if R.avg is None:
        return R
    from numeric.heterogeneous.averaged import rates_at

    av = R.avg
    uni = np.concatenate([R.uni, np.stack([av.src, av.dst], axis=1)])
    a = np.concatenate([R.a, rates_at(av, x)])
    return Rates(R.K, R.S, uni, a, R.pair, R.b)


def move_rates(R: Rates, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rates of the unilateral and the pairwise moves at ``x``."""
    R = frozen(R, x)
    ra = R.a * x[R.uni[:, 0]]
    rb = R.b * x[R.pair[:, 0]] * x[R.pair[:, 1]]
    return ra, rb


def drift(R: Rates, x: np.ndarray) -> np.ndarray:
    """``f(x) = sum_moves rate(x) * jump``."""
    ra, rb = move_rates(R, x)
    return apply_jumps(frozen(R, x), ra, rb)


def apply_jumps(R: Rates, wa: np.ndarray, wb: np.ndarray) -> np.ndarray:
    """``sum_moves w * jump`` for weights ``wa`` (unilateral) and ``wb`` (pairwise)."""
    jp = jumps(R)
    uni, su, pair, sp_ = jp.uni, jp.uni_signs, jp.pair, jp.pair_signs
    idx = np.concatenate([uni.ravel(), pair.ravel()])
    vals = np.concatenate([(wa[:, None] * su).ravel(), (wb[:, None] * sp_).ravel()])
    return _scatter(R.n, idx, vals)


def jacobian(R: Rates, x: np.ndarray) -> np.ndarray:
    """``df/dx`` at ``x``, an ``n x n`` array (rows: drift coordinates)."""
    if R.avg is not None:
        from numeric.heterogeneous.averaged import derivatives, jacobian_term

        _r, grad, _h = derivatives(R.avg, x)
        return jacobian(frozen(R, x), x) + jacobian_term(R.avg, x, grad)
    n = R.n
    jp = jumps(R)
    uni, su, pair, sp_ = jp.uni, jp.uni_signs, jp.pair, jp.pair_signs
    # unilateral: d r / d x_from = a
    rows = [uni.ravel()]
    cols = [np.repeat(uni[:, 0], 2)]
    vals = [(R.a[:, None] * su).ravel()]
    # pairwise: d r / d x_i1 = b x_i2 and d r / d x_i2 = b x_i1
    for col, other in ((0, 1), (1, 0)):
        d = R.b * x[pair[:, other]]
        rows.append(pair.ravel())
        cols.append(np.repeat(pair[:, col], 4))
        vals.append((d[:, None] * sp_).ravel())
    flat = np.concatenate(rows) * n + np.concatenate(cols)
    return _scatter(n * n, flat, np.concatenate(vals)).reshape(n, n)


def noise(R: Rates, x: np.ndarray) -> np.ndarray:
    """``Q(x) = sum_moves rate(x) jump jump^T``, an ``n x n`` array."""
    n = R.n
    ra, rb = move_rates(R, x)
    jp = jumps(frozen(R, x))
    uni, su, pair, sp_ = jp.uni, jp.uni_signs, jp.pair, jp.pair_signs
    flat, vals = [], []
    for rows, signs, r in ((uni, su, ra), (pair, sp_, rb)):
        flat.append((rows[:, :, None] * n + rows[:, None, :]).reshape(-1))
        coeff = (signs[:, None] * signs[None, :]).reshape(-1)
        vals.append((r[:, None] * coeff[None, :]).reshape(-1))
    return _scatter(n * n, np.concatenate(flat), np.concatenate(vals)).reshape(n, n)


def pair_term(R: Rates, W: np.ndarray) -> np.ndarray:
    """``sum_pairs b W[i1, i2] jump``: ``E[f(X)] - f(E X)`` for ``Cov(X) = W``."""
    wb = R.b * W[R.pair[:, 0], R.pair[:, 1]]
    return apply_jumps(R, R.a * 0, wb)


def second_order(R: Rates, x: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``E[f(X)] - f(E X) - J (E X - x)`` to order ``1/K`` for ``Cov(X) = W`` at
    ``x = E X``: :func:`pair_term` plus the averaged moves' Taylor term."""
    out = pair_term(R, W)
    if R.avg is not None:
        from numeric.heterogeneous.averaged import correction

        out = out + correction(R.avg, x, W)
    return out


def kept(K: int, S: int) -> np.ndarray:
    """The coordinates of the reduced state (every object's last state dropped)."""
    return np.array([k * S + s for k in range(K) for s in range(S - 1)], dtype=np.int64)


def reduce_jacobian(J: np.ndarray, K: int, S: int) -> np.ndarray:
    """The Jacobian in reduced coordinates: ``x_{k,S-1} = 1 - sum_{s<S-1} x_{k,s}``."""
    keep = kept(K, S)
    last = np.repeat(np.arange(K) * S + S - 1, S - 1)
    return (J[:, keep] - J[:, last])[keep, :]


def expand_vector(v: np.ndarray, K: int, S: int) -> np.ndarray:
    """A reduced direction as ``K x S`` coordinates (each object's entries sum to 0)."""
    r = v.reshape(K, S - 1)
    return np.concatenate([r, -r.sum(axis=1, keepdims=True)], axis=1).reshape(-1)


def expand_matrix(W: np.ndarray, K: int, S: int) -> np.ndarray:
    """A reduced covariance as ``K S x K S`` coordinates."""
    r = W.reshape(K, S - 1, K, S - 1)
    r = np.concatenate([r, -r.sum(axis=1, keepdims=True)], axis=1)
    r = np.concatenate([r, -r.sum(axis=3, keepdims=True)], axis=3)
    return r.reshape(K * S, K * S)


def on_simplex(x: np.ndarray, K: int, S: int) -> np.ndarray:
    """``x`` with each object's last probability set to one minus the others (the
    reduced coordinates' affine chart; float64 rounding would otherwise leave a sum
    off 1 by an ulp, which no reduced step corrects)."""
    r = x.reshape(K, S).copy()
    r[:, S - 1] = 1 - r[:, : S - 1].sum(axis=1)
    return r.reshape(-1)
