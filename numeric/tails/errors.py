"""Error estimates of the exact tail statistics, so that each is printed with only
the digits it has (docs/design.md, "Printed digits").

Every exact law of :mod:`numeric.tails` is a :class:`~numeric.tails.statistics.TotalQueueLaw`
``p_0, p_1, ...``; its error is stated by a :class:`LawError`, an estimate of

.. math::

    \\ell_0 = \\sum_k |p_k - p_k^{\\rm true}|, \\qquad
    \\ell_1 = \\sum_k k\\, |p_k - p_k^{\\rm true}| ,

from which each statistic's absolute error follows (:func:`law_statistic_errors`):
``P(eps X > x)`` within ``ell_0`` (a tail sum of the pmf), the distance
``sup_x |P(eps X > x) - exp(-x/m)|`` within ``ell_0`` plus the effect of ``m``'s own
error (``|d exp(-x/m)/dm| <= 1/(e m)``), ``E[eps X]`` within ``eps ell_1``.  How each
law gets its ``(ell_0, ell_1)``:

* JSQ (phase-truncated QBD, :mod:`numeric.tails.jsq_qbd`): the distances between the
  laws at the last three truncations ``D`` (:func:`law_distance`), the truncation's
  changes, extrapolated geometrically (:func:`truncation_error`);
* the SSQ (roots method, :mod:`numeric.tails.ssq`): first-order propagation of each
  root's error (:func:`root_errors`: a Newton step's size plus the rounding of the
  polynomial's value) through the linear system for the mixture weights
  (:func:`mixture_error`);
* M/M/n (closed form, :mod:`numeric.tails.mmn`): SciPy's Poisson pmf at mean ``a``
  has a relative error of order ``a u`` (the rounding of its exponent
  ``k log a - a - log k!``, of size ``a``); ``ell_0 = 8 (n + 2) u``
  (:data:`MMN_UNITS`), four times the largest measured against 40-digit mpmath
  (``2 n u`` at ``n = 1000``), ``ell_1 = ell_0 E X``.

``u = 2^-53`` (:data:`UNIT`).  These are estimates (first order, or a truncation
change), not rigorous bounds; ``tests/test_printed_digits.py`` checks them against
independent routes (the untruncated JSQ chain, mpmath).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mfstein.ground.display import error_figure, measured, printed_to_error

__all__ = [
    "UNIT",
    "LawError",
    "decay_rate_error",
    "law_distance",
    "law_statistic_errors",
    "mixture_error",
    "mmn_law_error",
    "printed_accuracy",
    "root_errors",
    "truncation_error",
]

#: The unit roundoff of float64.
UNIT = 2.0**-53

#: ``ell_0`` of the M/M/n law in units of ``(n + 2) u`` (module docstring).
MMN_UNITS = 8.0


@dataclass(frozen=True)
class LawError:
    """Estimates of ``sum_k |p_k - p_k^true|`` (``mass``) and ``sum_k k |p_k - p_k^true|``
    (``first``) of a law on ``{0, 1, ...}``; ``None`` for no estimate."""

    #: The estimate of ``sum_k |p_k - p_k^true|``; ``None`` for no estimate.
    mass: float | None
    #: The estimate of ``sum_k k |p_k - p_k^true|``; ``None`` for no estimate.
    first: float | None


def law_statistic_errors(
    err: LawError,
    eps: float,
    scaled_mean: float,
    limit_mean: float,
    *,
    limit_mean_error: float = 0.0,
    eps_error: float = 0.0,
) -> dict[str, float | None]:
    """The absolute errors of ``tail`` (every ``x``), ``sup_distance`` and
    ``scaled_mean`` from the law's error (module docstring), each with the rounding
    of its own evaluation (a few ``u``); ``eps_error`` and ``limit_mean_error`` are
    those of ``eps`` and ``m`` when they are computed (the SSQ's)."""
    if err.mass is None or err.first is None:
        return {"tail": None, "sup_distance": None, "scaled_mean": None}
    tail = err.mass + 4 * UNIT
    shift = limit_mean_error / (math.e * limit_mean) if limit_mean > 0 else 0.0
    mean = eps * err.first + (8 * UNIT + eps_error / eps) * abs(scaled_mean)
    return {"tail": tail, "sup_distance": tail + shift + 4 * UNIT, "scaled_mean": mean}


def decay_rate_error(decay: float, decay_error: float, eps: float, rate: float) -> float:
    """The error of ``-log(r) / eps`` from ``r``'s: ``|d log r| = dr / r``, plus the
    rounding of ``r`` itself, of the logarithm and of the division."""
    return (decay_error + UNIT * decay) / (decay * eps) + 8 * UNIT * abs(rate)


def _tail_coefficients(law, K: int) -> np.ndarray:
    """``d_j`` with ``p_{K+i} = Re sum_j d_j r_j^i`` for ``K >= law.K``."""
    return law.coef * law.ratios ** float(K - law.K)


def law_distance(law, other) -> LawError:
    """``(ell_0, ell_1)`` between two laws with the same tail ratios: exact on the
    longer head, and beyond it the geometric bound ``sum_j |d_j| |r_j|^i`` summed in
    closed form (``d_j`` the difference of the tail coefficients)."""
    K = max(law.K, other.K)
    k = np.arange(K + 1)
    diff = np.abs(law.pmf(k) - other.pmf(k))
    mass, first = float(diff.sum()), float(k @ diff)
    if law.coef.size:
        d = np.abs(_tail_coefficients(law, K) - _tail_coefficients(other, K))
        r = np.abs(law.ratios)
        mass += float(np.sum(d * r / (1 - r)))
        first += float(np.sum(d * (K * r / (1 - r) + r / (1 - r) ** 2)))
    return LawError(mass, first)


#: Factor on the last change when the changes do not shrink (ratio ``>= MAX_RATIO``).
NOT_SHRINKING = 100.0

#: Factor on the geometric extrapolation (its ratio is itself estimated from two
#: changes; measured: JSQ n = 2, eps = 0.1, ``E exp(||q_perp||)``'s error equals the
#: extrapolation without it).
SAFETY = 2.0

#: Largest ratio of two successive changes taken as geometric convergence.
MAX_RATIO = 0.99


def truncation_error(last: float, before: float | None = None) -> float:
    """The error left in a value after its ``last`` change under refinement, the change
    ``before`` it known: with geometric convergence of ratio ``q = last / before``
    the changes still to come sum to ``last q / (1 - q)`` (Aitken), at least ``last``,
    times :data:`SAFETY`; ``NOT_SHRINKING`` times ``last`` when ``q >= MAX_RATIO``;
    ``SAFETY`` times ``last`` when there is no change before (``before`` ``None`` or
    0)."""
    if not before:
        return SAFETY * last
    q = last / before
    if q >= MAX_RATIO:
        return NOT_SHRINKING * last
    return SAFETY * last * max(1.0, q / (1.0 - q))


def mmn_law_error(n: int, mean: float) -> LawError:
    """The M/M/n law's ``(ell_0, ell_1)`` (module docstring)."""
    mass = MMN_UNITS * (n + 2) * UNIT
    return LawError(mass, mass * mean)


def root_errors(coeffs: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """The error of each computed root ``r`` of the polynomial ``coeffs`` (highest power
    first): the size ``|p(r)| / |p'(r)|`` of one more Newton step, plus the rounding of
    ``p(r)`` by Horner's rule, ``2 deg u sum_k |a_k| |r|^k``, over ``|p'(r)|``."""
    deg = coeffs.size - 1
    value = np.abs(np.polyval(coeffs, roots))
    slope = np.abs(np.polyval(np.polyder(coeffs), roots))
    rounding = 2 * deg * UNIT * np.polyval(np.abs(coeffs), np.abs(roots))
    return (value + rounding) / slope


def mixture_error(
    M: np.ndarray, dM: np.ndarray, c: np.ndarray, roots: np.ndarray, dr: np.ndarray
) -> LawError:
    """``(ell_0, ell_1)`` of ``p_0 = Re sum_j c_j``, ``p_k = Re sum_j c_j r_j^k`` when
    ``M c = e`` (``M``'s column ``j`` a function of ``r_j`` only, ``dM`` its derivative)
    and each root has the error ``dr_j``.

    First order: ``M dc = -sum_j dM_j c_j dr_j`` plus the rounding of the solve and of
    ``M``, so ``|dc| <= sum_j |M^-1 dM_j| |c_j| dr_j + |M^-1| 4 U u |M| |c|`` (``U``
    columns; each root's effect is propagated exactly, only its phase is unknown --
    ``|M^-1| |dM|`` would lose the cancellation inside ``M^-1 dM_j``, a factor ``10^3``
    to ``10^5`` for binomial pmfs on 0..20, where ``M`` has condition ``10^15``); then
    ``dp_k = sum_j (dc_j r_j^k + c_j k r_j^(k-1) dr_j)`` and, with ``s_j = |r_j|``,
    ``ell_0 <= sum_j |dc_j| / (1 - s_j) + |c_j| dr_j / (1 - s_j)^2`` (``k = 0`` is ``p_0``),
    ``ell_1 <= sum_j |dc_j| s_j / (1 - s_j)^2 + |c_j| dr_j (1 + s_j) / (1 - s_j)^3``.
    """
    size = M.shape[0]
    a = np.abs(c)
    moved = np.abs(np.linalg.solve(M, dM))  # |M^-1 dM_j|, column j: root j's effect
    rounding = np.abs(np.linalg.inv(M)) @ (4 * size * UNIT * (np.abs(M) @ a))
    dc = moved @ (a * dr) + rounding
    s = np.abs(roots)
    mass = np.sum(dc / (1 - s) + a * dr / (1 - s) ** 2)
    first = np.sum(dc * s / (1 - s) ** 2 + a * dr * (1 + s) / (1 - s) ** 3)
    return LawError(float(mass) + 8 * UNIT, float(first) + 8 * UNIT)


def printed_accuracy(accuracy: dict[str, Any], errors: dict[str, Any]) -> dict[str, Any]:
    """A result's ``accuracy`` mapping as printed: a number with an error in ``errors``
    (the SSQ's drift, its Cramér exponent) down to that error's place, ``seconds`` as a
    measurement, every other float an error statement (residuals, masses, changes)
    with 3 digits rounded up; text and integers as they are."""
    out: dict[str, Any] = {}
    for k, v in accuracy.items():
        if k == "seconds":
            out[k] = measured(v)
        elif k in errors:
            out[k] = printed_to_error(v, errors[k])
        elif isinstance(v, float):
            out[k] = error_figure(v)
        else:
            out[k] = v
    return out
