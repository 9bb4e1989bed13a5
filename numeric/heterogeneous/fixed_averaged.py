"""The averaged moves of a heterogeneous population on fixed-point integers.

A move whose rate ``r(m)`` is a function of the occupancy averages ``m``
(:mod:`numeric.heterogeneous.averaged`) enters the moment equations through its
rate at ``x`` (drift and noise, as a unilateral move of rate ``r(m(x))``), the
Jacobian's extra term ``x_src dr/dx`` and the covariance correction of ``v'``.
All three are computed by the functions of :mod:`numeric.heterogeneous.averaged`
(one source of truth: the rate functions, their gradient and Hessian compiled
once per model by SymPy and lambdified for mpmath) on ``mpf`` numbers with
``P + GUARD_BITS`` bits, read from and rounded back to fixed point
(:mod:`numeric.heterogeneous.fixed_point`): each result carries one rounding of
``2^-P`` at most, as every other fixed-point product does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np

from numeric.heterogeneous.averaged import Averaged

#: Bits beyond the ``P`` fraction bits at which the rate functions are evaluated.
GUARD_BITS = 32


def _fixed(values: np.ndarray, P: int) -> np.ndarray:
    from numeric.heterogeneous.fixed_numbers import to_fixed

    return np.array([to_fixed(mpmath.mpf(v), P) for v in values.flat],
                    dtype=object).reshape(values.shape)


@dataclass
class FixedAveraged:
    """The averaged moves ``av`` (their functions at ``mpf``) for ``P`` fraction bits."""

    av: Averaged
    P: int
    _last: tuple[Any, Any] = field(default=(None, None), init=False, repr=False)

    @property
    def prec(self) -> int:
        """The binary precision of the ``mpf`` evaluations."""
        return self.P + GUARD_BITS

    def _mp(self, x: np.ndarray) -> np.ndarray:
        from numeric.heterogeneous.fixed_numbers import from_fixed

        return from_fixed(x, self.P)

    def rates(self, x: np.ndarray) -> np.ndarray:
        """The rate functions ``r(m(x))`` of every move (fixed point, not times ``x_src``;
        the last point's kept: the drift and the Jacobian both ask)."""
        from numeric.heterogeneous.averaged import rates_at

        key = tuple(x.tolist())
        if self._last[0] != key:
            with mpmath.workprec(self.prec):
                self._last = (key, _fixed(rates_at(self.av, self._mp(x)), self.P))
        return self._last[1]

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        """``sum_moves jump (x_src dr/dx)``, flat ``n * n`` (fixed point): the weights
        of each move at ``mpf``, the ``n x n`` sum in integers."""
        from numeric.heterogeneous.averaged import (
            assemble_jacobian,
            derivatives,
            jacobian_weights,
        )

        with mpmath.workprec(self.prec):
            xm = self._mp(x)
            _r, grad, _h = derivatives(self.av, xm)
            common, own = jacobian_weights(self.av, xm, grad)
            weights = _fixed(common, self.P), _fixed(own, self.P)
        return assemble_jacobian(self.av, *weights).ravel()

    def correction(self, x: np.ndarray, W: np.ndarray) -> np.ndarray:
        """The averaged moves' covariance term of ``v'`` (fixed point, length ``n``): the
        sums of ``W`` it needs exactly in integers, the rest at ``mpf``."""
        from numeric.heterogeneous.averaged import correction_of_sums, covariance_sums

        sums = covariance_sums(W, self.av.K, self.av.S)
        with mpmath.workprec(self.prec):
            return _fixed(correction_of_sums(self.av, self._mp(x),
                                             *[self._mp(a) for a in sums]), self.P)
