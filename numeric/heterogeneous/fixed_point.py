"""The order-1 moment equations of a heterogeneous population on fixed-point integers.

A number ``u`` is held as the Python integer ``round(u 2^P)`` (``P`` fraction
bits); a product is ``(a b) >> P``, one rounding of at most ``2^-P`` each.  The
right-hand side of

    x' = f(x),   v' = J v + sum_pairs b W[i1, i2] l,   W' = J W + W J^T + Q(x)

(:mod:`numeric.heterogeneous.transient`) is evaluated on the moves of
:class:`numeric.heterogeneous.rates.Rates` with the index bookkeeping of
:mod:`numeric.heterogeneous.algebra` (the same jumps, the same signs): every sum
over moves is a precomputed scatter (:class:`Scatter`, a sort and one
``add.reduceat`` over object arrays of integers) and ``J W`` is one product of
:class:`flint.fmpz_mat` integer matrices (exact, multimodular).  One evaluation
for K = 50, S = 3 (150 coordinates, 12 250 pairwise moves) takes about 0.1 s at
50 digits, where the same functions on ``mpf`` object arrays take seconds.
Averaged moves (rates that are functions of the averages, ``R.avg``) are
unilateral moves whose rates are recomputed at each ``x``
(:class:`numeric.heterogeneous.fixed_averaged.FixedAveraged`), plus their
Jacobian term and covariance correction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numeric.heterogeneous import algebra as alg
from numeric.heterogeneous.fixed_numbers import to_fixed, zeros
from numeric.heterogeneous.rates import Rates


class Scatter:
    """``out[index[j]] += values[j]`` for all ``j``, into a vector of length ``size``,
    with the sort done once."""

    def __init__(self, index: np.ndarray, size: int) -> None:
        self.order = np.argsort(index, kind="stable")
        ordered = index[self.order]
        self.starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(
            ordered) else np.zeros(0, dtype=np.int64)
        self.targets = ordered[self.starts]
        self.size = size

    def __call__(self, values: np.ndarray) -> np.ndarray:
        out = zeros(self.size)
        if len(self.order):
            out[self.targets] = np.add.reduceat(values[self.order], self.starts)
        return out


@dataclass
class FixedSystem:
    """The moment equations of ``R`` with ``P`` fraction bits."""

    R: Rates
    P: int

    def __post_init__(self) -> None:
        from numeric.heterogeneous.fixed_averaged import FixedAveraged

        R, P, n = self.R, self.P, self.R.n
        jp = alg.jumps(R)
        su, pair, sp_ = jp.uni_signs, jp.pair, jp.pair_signs
        self.a = np.array([to_fixed(v, P) for v in R.a], dtype=object)
        self.avg = None if R.avg is None else FixedAveraged(R.avg, P)
        # the averaged moves follow the constant ones, with rates taken at each x
        uni = R.uni if R.avg is None else np.concatenate(
            [R.uni, np.stack([R.avg.src, R.avg.dst], axis=1)]).astype(np.int64)
        self.n_const = len(R.uni)
        self.b = np.array([to_fixed(v, P) for v in R.b], dtype=object)
        self.uni, self.pair = uni, pair
        self.su, self.sp = su, sp_
        self.jump = Scatter(np.concatenate([uni.T.ravel(), pair.T.ravel()]), n)
        self.pair_jump = Scatter(pair.T.ravel(), n)
        # J: constant unilateral part, and d(b x_i1 x_i2)/dx_i1, /dx_i2 scattered
        J0 = zeros(n * n)
        for r in range(2):
            for j in range(self.n_const):
                J0[uni[j, r] * n + uni[j, 0]] += int(su[r]) * self.a[j]
        self.J0 = J0
        avg = uni[self.n_const:]
        self.avg_jac = Scatter(np.concatenate([avg[:, r] * n + avg[:, 0] for r in range(2)]),
                               n * n)
        self.jac = Scatter(np.concatenate(
            [pair[:, r] * n + pair[:, c] for c in (0, 1) for r in range(4)]), n * n)
        self.noise = Scatter(np.concatenate(
            [uni[:, r] * n + uni[:, c] for r in range(2) for c in range(2)]
            + [pair[:, r] * n + pair[:, c] for r in range(4) for c in range(4)]), n * n)

    @property
    def n(self) -> int:
        """The number of coordinates ``K S``."""
        return self.R.n

    def _signed(self, values: np.ndarray, signs: np.ndarray) -> list[np.ndarray]:
        return [values if s > 0 else -values for s in signs]

    def unilateral(self, x: np.ndarray) -> np.ndarray:
        """The rate constants of the unilateral moves at ``x`` (the averaged ones last)."""
        if self.avg is None:
            return self.a
        return np.concatenate([self.a, self.avg.rates(x)])

    def drift_parts(self, x: np.ndarray) -> tuple[np.ndarray, ...]:
        """The unilateral rates, the pairwise rates and ``b x_i2``, ``b x_i1``."""
        P = self.P
        ra = (self.unilateral(x) * x[self.uni[:, 0]]) >> P
        x1, x2 = x[self.pair[:, 0]], x[self.pair[:, 1]]
        bx2 = (self.b * x2) >> P
        bx1 = (self.b * x1) >> P
        rb = (bx2 * x1) >> P
        return ra, rb, bx1, bx2

    def drift(self, x: np.ndarray) -> np.ndarray:
        """``f(x)`` (fixed point)."""
        ra, rb, _, _ = self.drift_parts(x)
        return self.jump(np.concatenate(self._signed(ra, self.su) + self._signed(rb, self.sp)))

    def rhs(self, z: np.ndarray, order: int) -> np.ndarray:
        """The derivative of ``z = (x, v, vec W)`` (order 1) or of ``z = x`` (order 0)."""
        import flint

        n, P = self.n, self.P
        x = z[:n]
        ra, rb, bx1, bx2 = self.drift_parts(x)
        f = self.jump(np.concatenate(self._signed(ra, self.su) + self._signed(rb, self.sp)))
        if order == 0:
            return f
        v, W = z[n:2 * n], z[2 * n:].reshape(n, n)
        J = self.J0 + self.jac(np.concatenate(
            self._signed(bx2, self.sp) + self._signed(bx1, self.sp)))
        if self.avg is not None:
            a = self.unilateral(x)[self.n_const:]
            J = J + self.avg_jac(np.concatenate(self._signed(a, self.su))) + self.avg.jacobian(x)
        coeff_u = [int(self.su[r] * self.su[c]) for r in range(2) for c in range(2)]
        coeff_p = [int(self.sp[r] * self.sp[c]) for r in range(4) for c in range(4)]
        Q = self.noise(np.concatenate(self._signed(ra, np.array(coeff_u))
                                      + self._signed(rb, np.array(coeff_p))))
        prod = flint.fmpz_mat(n, n, J.tolist()) * flint.fmpz_mat(n, n, W.ravel().tolist())
        JW = (np.array([int(e) for e in prod.entries()], dtype=object) >> P).reshape(n, n)
        dW = (JW + JW.T).ravel() + Q
        Jm = J.reshape(n, n)
        wb = (self.b * W[self.pair[:, 0], self.pair[:, 1]]) >> P
        dv = (Jm.dot(v) >> P) + self.pair_jump(np.concatenate(self._signed(wb, self.sp)))
        if self.avg is not None:
            dv = dv + self.avg.correction(x, W)
        return np.concatenate([f, dv, dW])
