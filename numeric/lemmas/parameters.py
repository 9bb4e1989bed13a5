"""Lemma 12's parameter conditions, exactly, with rational arithmetic.

The core paper's Lemma 12 asks for an integer ``r`` and a real ``epsilon`` with

    (21)  3 (1 + alpha + xi) / (1 - 18 alpha - 27 xi) < r,
    (22)  2 r (1 + 3 alpha + 3 xi) / 3 < epsilon < r (1 - 4 alpha - 7 xi) - 1 - alpha - xi.

Multiplying out, the interval (22) is non-empty exactly when
``r (1 - 18 alpha - 27 xi) > 3 (1 + alpha + xi)``, i.e. exactly when (21) holds
(and ``1 - 18 alpha - 27 xi > 0``): (21) is the non-emptiness condition of (22).

All quantities are :class:`fractions.Fraction` built from the decimal strings
the user typed (``"0.05"`` is exactly 1/20), so the remark after Lemma 12 --
"for alpha = 0.05, r needs to be at least 32 and epsilon can be 24.54" -- is
checked exactly.  ``xi = 0`` is the limit ``xi -> 0`` (every bound is affine or a
ratio of affine functions of ``xi``, continuous at 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from mfstein.ground.display import Presentable
from mfstein.ground.errors import ParameterError


def to_fraction(name: str, value: object) -> Fraction:
    """``value`` (int, decimal string, Fraction, float, mpf) as an exact Fraction.

    Strings and decimals are read exactly (``"0.05"`` -> 1/20); a float is read as
    its shortest decimal representation (``0.05`` -> 1/20, not the binary value).
    """
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    text = value if isinstance(value, str) else str(value)  # str(0.05) == "0.05"
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise ParameterError(f"{name} must be a decimal number, got {value!r}.") from None


@dataclass(frozen=True, repr=False)
class Lemma12Parameters(Presentable):
    """The exact solution set of conditions (21)-(22) at given ``alpha`` and ``xi``."""

    #: The input ``alpha``.
    alpha: Fraction
    #: The input ``xi`` (``xi = 0`` is the limit ``xi -> 0``).
    xi: Fraction
    #: Left side of (21), ``3 (1 + alpha + xi) / (1 - 18 alpha - 27 xi)``; ``None``
    #: when the denominator is not positive (no ``r`` exists).
    r_bound: Fraction | None
    #: The least integer ``r`` with ``r_bound < r``, or ``None``.
    r_min: int | None
    #: The lower end of the open interval (22) of admissible ``epsilon`` at ``r = r_min``.
    eps_low: Fraction | None
    #: The upper end of the open interval (22) of admissible ``epsilon`` at ``r = r_min``.
    eps_high: Fraction | None

    _MORE: ClassVar[str] = "exact fractions: .r_bound, .eps_low, .eps_high"

    @property
    def feasible(self) -> bool:
        """Whether some ``(r, epsilon)`` satisfies (21)-(22)."""
        return self.r_min is not None and self.eps_low < self.eps_high

    def to_dict(self) -> dict[str, Any]:
        """The solution set, every number an exact fraction ``"p/q"`` (``exact``:
        rational arithmetic, no rounding); ``None`` where no ``r`` exists."""

        def text(q: Fraction | None) -> str | None:
            return None if q is None else str(q)

        return {
            "alpha": text(self.alpha),
            "xi": text(self.xi),
            "exact": True,
            "feasible": bool(self.feasible),
            "r_bound": text(self.r_bound),
            "r_min": self.r_min,
            "eps_low": text(self.eps_low),
            "eps_high": text(self.eps_high),
        }

    def _rows(self) -> list[tuple[str, str]]:
        rows = [("alpha, xi", f"{self.alpha}, {self.xi}"), ("feasible", str(self.feasible))]
        if self.r_min is not None:
            rows += [
                ("r_bound", f"{self.r_bound} (r > r_bound, eq. (21))"),
                ("r_min", str(self.r_min)),
                ("epsilon", f"({self.eps_low}, {self.eps_high}) (eq. (22) at r_min)"),
            ]
        return rows


def r_lower_bound(alpha: Fraction, xi: Fraction) -> Fraction | None:
    """Left side of (21), or ``None`` if ``1 - 18 alpha - 27 xi <= 0``."""
    den = 1 - 18 * alpha - 27 * xi
    if den <= 0:
        return None
    return 3 * (1 + alpha + xi) / den


def epsilon_interval(alpha: Fraction, xi: Fraction, r: int) -> tuple[Fraction, Fraction]:
    """The bounds of (22) for integer ``r``: ``(2r(1+3a+3x)/3, r(1-4a-7x)-1-a-x)``."""
    low = Fraction(2 * r) * (1 + 3 * alpha + 3 * xi) / 3
    high = r * (1 - 4 * alpha - 7 * xi) - 1 - alpha - xi
    return low, high


def lemma12_parameters(alpha: object, xi: object = 0) -> Lemma12Parameters:
    """Solve Lemma 12's conditions (21)-(22) exactly.

    Parameters
    ----------
    alpha:
        Heavy-traffic exponent (``0 < alpha < 1/18`` in the paper), as a decimal
        string or Fraction for an exact answer.
    xi:
        The paper's small ``xi >= 0``; ``0`` gives the limit ``xi -> 0``.

    Examples
    --------
    >>> p = lemma12_parameters("0.05")
    >>> p.r_bound, p.r_min, p.eps_low, p.eps_high
    (Fraction(63, 2), 32, Fraction(368, 15), Fraction(491, 20))
    """
    a = to_fraction("alpha", alpha)
    x = to_fraction("xi", xi)
    if a < 0:
        raise ParameterError(f"alpha must be >= 0, got {alpha!r}.")
    if x < 0:
        raise ParameterError(f"xi must be >= 0, got {xi!r}.")
    rb = r_lower_bound(a, x)
    if rb is None:
        return Lemma12Parameters(a, x, None, None, None, None)
    r_min = math.floor(rb) + 1
    low, high = epsilon_interval(a, x, r_min)
    return Lemma12Parameters(a, x, rb, r_min, low, high)


def xi_supremum(alpha: object, r: int, epsilon: object) -> Fraction:
    """The supremum of ``xi`` for which ``(r, epsilon)`` satisfies (21)-(22) at ``alpha``.

    Each condition is linear in ``xi`` once multiplied out:

    * (21): ``xi < (r (1 - 18 a) - 3 (1 + a)) / (3 + 27 r)``;
    * (22) left: ``xi < (3 epsilon / (2 r) - 1 - 3 a) / 3``;
    * (22) right: ``xi < (r (1 - 4 a) - 1 - a - epsilon) / (7 r + 1)``.

    The admissible ``xi`` form ``[0, sup)`` when the returned value is positive,
    and no ``xi >= 0`` works when it is ``<= 0``.  For the paper's remark
    (``a = 1/20, r = 32, epsilon = 24.54``) the answer is ``1/22500``.
    """
    a = to_fraction("alpha", alpha)
    e = to_fraction("epsilon", epsilon)
    r = int(r)
    bounds = (
        (r * (1 - 18 * a) - 3 * (1 + a)) / Fraction(3 + 27 * r),
        (Fraction(3) * e / (2 * r) - 1 - 3 * a) / 3,
        (r * (1 - 4 * a) - 1 - a - e) / Fraction(7 * r + 1),
    )
    return min(bounds)
