"""How many levels of the power-of-d family carry the fixed point to a precision.

The occupancy exponents ``e_k`` of the infinite-buffer fixed point
``s*_k = rho^(e_k)`` and the level counts read from them: the truncation rule of
the open-buffer factories (:mod:`derive.models.open_buffers`) and of the
supermarket's solvers.  Standard library and mpmath only, and nothing of the
families themselves, so :mod:`derive.models.supermarket` and
:mod:`derive.models.open_buffers` both import it (it was part of the first,
which re-exports it).
"""

from __future__ import annotations

import math
from typing import Any


def occupancy_exponent(d: int, k: int) -> int:
    """``e_k = (d^k - 1)/(d - 1) = 1 + d + ... + d^(k-1)`` (``k`` for ``d = 1``).

    Summing the drift of the core paper's eq. (1) over the levels ``j >= k``
    telescopes to ``s_k = rho (s_{k-1}^d - s_b^d)``; with an infinite buffer
    (``s_b -> 0``) and ``s_0 = 1`` this is ``s_k = rho s_{k-1}^d``, so
    ``s*_k = rho^(e_k)`` with ``e_k = 1 + d e_{k-1}``: the level truncation of the
    whole family (``lam < mu``, ``rho = lam/mu``) and, for a finite buffer, the
    bound ``s*_k <= rho^(e_k)``.
    """
    return (d**k - 1) // (d - 1) if d > 1 else k


def levels_above(rho: Any, d: int, digits: Any) -> int:
    """The number ``n`` of levels ``k >= 1`` with ``rho^(e_k) >= 10^-digits``
    (:func:`occupancy_exponent`; ``0 < rho < 1``): the length of the
    infinite-buffer fixed point down to ``10^-digits``.

    ``e_k`` increases with ``k``, so these are the levels ``1..n``: with
    ``x = digits / -log10(rho)``, ``n`` is the largest ``k`` with ``e_k <= x``,
    ``floor(log_d(1 + x (d - 1)))`` (``floor(x)`` for ``d = 1``).  The float
    estimate of the logarithm is corrected with the exact integer exponents, and
    ``-log10(rho)`` comes from ``log1p(rho - 1)`` at 30 digits, with ``rho - 1``
    formed from ``rho`` at its own precision, so ``rho`` within ``1e-20`` of 1
    does not round to 1.
    """
    import mpmath

    with mpmath.workdps(30):
        if isinstance(rho, mpmath.mpf):
            r = rho  # kept at its own precision: ``r - 1`` is then exact before rounding
        else:
            try:
                r = mpmath.mpf(rho)
            except (TypeError, ValueError):
                r = mpmath.mpf(str(rho))
        x = mpmath.mpf(digits) / (-mpmath.log1p(r - 1) / mpmath.log(10))
        if d == 1:
            return max(0, int(mpmath.floor(x)))
        n = max(0, int(math.log(float(x) * (d - 1) + 1, d)))
        while occupancy_exponent(d, n + 1) <= x:
            n += 1
        while n > 0 and occupancy_exponent(d, n) > x:
            n -= 1
        return n


def levels_for(rho: Any, d: int, digits: int) -> int:
    """The buffer of the power-of-d family truncated for ``digits`` digits: the
    :func:`levels_above` ``10^-digits`` of the infinite-buffer fixed point and
    two more, so that the truncated model's reflecting top level lies two levels
    below ``10^-digits``.  ``0 < rho < 1``."""
    return levels_above(rho, d, digits) + 2
