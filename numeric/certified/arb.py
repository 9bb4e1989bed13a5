"""Small Arb helpers for :mod:`numeric.certified.enclosures`: exact conversions, outward-rounded
decimal strings, norms and float64 round trips of ``flint.arb_mat``.

Everything here is ball arithmetic (python-flint's ``arb``: a midpoint and a
radius; every operation returns a ball containing every exact result); the
helpers only move numbers between representations without losing that
containment: conversions *into* Arb are exact (binary floats, ``mpf``,
integers, ``Fraction``) or correctly enclosed (decimal strings), and decimal
strings coming *out* are rounded outward.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import numpy as np

from mfstein.ground.errors import ParameterError


@contextmanager
def working_precision(bits: int) -> Iterator[None]:
    """Set ``flint.ctx.prec`` to ``bits`` for the block, then restore it."""
    import flint

    old = flint.ctx.prec
    flint.ctx.prec = int(bits)
    try:
        yield
    finally:
        flint.ctx.prec = old


def bits_for_digits(digits: int) -> int:
    """Working precision in bits for ``digits`` decimal digits (plus 16 spare bits)."""
    return math.ceil(digits * math.log2(10)) + 16


def to_arb(name: str, value: Any) -> Any:
    """``value`` as an ``arb`` ball that contains it exactly.

    ``arb`` balls pass through; ``int``, ``Fraction``, SymPy rationals,
    ``mpmath.mpf`` and binary ``float`` are converted exactly (the latter two
    through their mantissa and exponent); decimal strings (``"0.9"``,
    ``"1e-3"``, ``"3/7"``) are read as the exact rational they denote, so the
    ball is one correctly rounded division wide.  A callable without arguments
    is called (at the working precision) and must return an ``arb`` ball: the
    way to pass an irrational parameter such as ``1 - gamma/N^alpha``.
    """
    from flint import arb

    if isinstance(value, arb):
        return value
    if callable(value):  # a ball computed at the working precision (e.g. 1 - g/N^a)
        out = value()
        if not isinstance(out, arb):
            raise ParameterError(f"{name} must evaluate to an arb ball, got {type(out).__name__}.")
        return out
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be a number, got {value!r}.")
    if isinstance(value, int):
        return arb(value)
    if isinstance(value, Fraction):
        return _fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ParameterError(f"{name} must be finite, got {value!r}.")
        return arb(value)  # exact: a double is a dyadic rational
    tname = type(value).__module__ + "." + type(value).__name__
    if tname.startswith("mpmath") or hasattr(value, "_mpf_"):
        import mpmath

        if not mpmath.isfinite(value) or isinstance(value, mpmath.mpc):
            raise ParameterError(f"{name} must be a finite real number, got {value!r}.")
        sign, man, exp, _ = value._mpf_  # exact: mpmath.mpf(value) would round to mp.prec
        if not man:
            return arb(0)
        return arb((-int(man) if sign else int(man), int(exp)))
    if tname.startswith("sympy"):
        import sympy as sp

        expr = sp.sympify(value)
        if isinstance(expr, sp.Rational):
            return _fraction(Fraction(int(expr.p), int(expr.q)))
        if isinstance(expr, sp.Float):
            return to_arb(name, float(expr)) if expr._prec <= 53 else arb(str(expr))
        raise ParameterError(f"{name} must be a rational number, got {value}.")
    if isinstance(value, str):
        text = value.strip()
        try:
            return _fraction(Fraction(text))
        except (ValueError, ZeroDivisionError):
            msg = f"{name} must be a decimal number or p/q, got {value!r}."
            raise ParameterError(msg) from None
    raise ParameterError(f"{name} must be a number, got {type(value).__name__}.")


def _fraction(q: Fraction) -> Any:
    from flint import arb

    if q.denominator == 1:
        return arb(q.numerator)
    return arb(q.numerator) / q.denominator


def power_of_two(e: int) -> Any:
    """The exact ball ``2^e``."""
    from flint import arb

    return arb((1, int(e)))


def ball(mid: Any, rad: Any) -> Any:
    """The ball ``[mid +/- rad]`` (``rad`` an upper bound, itself rounded up)."""
    from flint import arb

    return arb(mid) + arb(0, rad)


def upper(x: Any) -> float:
    """A float64 upper bound of the ball ``x`` (``inf`` if it does not fit)."""
    u = x.upper()
    f = float(u)
    if f < u:  # round up
        f = math.nextafter(f, math.inf)
    return f


def lower(x: Any) -> float:
    """A float64 lower bound of the ball ``x``."""
    lo = x.lower()
    f = float(lo)
    if f > lo:
        f = math.nextafter(f, -math.inf)
    return f


def sci(x: Any, decimals: int = 2) -> str:
    """An upper bound of the ball ``|x|`` in scientific notation (``"4.94e-324"``,
    ``"1.00e-400"``) at any exponent, rounded up (float64 formatting flushes
    exponents below -308 to zero)."""
    import mpmath

    u = abs(x).upper()
    if u.is_zero():
        return f"{0:.{decimals}e}"
    with mpmath.workdps(decimals + 20):
        v = mpmath.mpf(u.mid().str(decimals + 20, radius=False))
        e = int(mpmath.floor(mpmath.log10(v)))
        m = mpmath.ceil(v / mpmath.mpf(10) ** e * 10**decimals)
        if m >= 10 ** (decimals + 1):
            m, e = m / 10, e + 1
        digits = str(int(m))
    return f"{digits[0]}.{digits[1:]}e{'-' if e < 0 else '+'}{abs(e):02d}"


def to_numpy(A: Any, scale_exp: int = 0) -> np.ndarray:
    """Float64 midpoints of ``A * 2^scale_exp`` (rounded; for approximations only)."""
    if scale_exp:
        A = A * power_of_two(scale_exp)
    n, m = A.nrows(), A.ncols()
    return np.array([float(v.mid()) for v in A.entries()], dtype=np.float64).reshape(n, m)


def from_numpy(X: np.ndarray, scale_exp: int = 0) -> Any:
    """The exact ``arb_mat`` of a float64 array times ``2^scale_exp``."""
    from flint import arb_mat

    A = arb_mat(np.asarray(X, dtype=np.float64).tolist())
    if scale_exp:
        A = A * power_of_two(scale_exp)
    return A


def max_exponent(A: Any) -> int:
    """``floor(log2 max |mid|)`` over the entries of ``A`` (``0`` if all vanish)."""
    best = None
    for v in A.entries():
        m = v.mid()
        if m.is_zero():
            continue
        man, exp = m.man_exp()
        e = int(exp) + int(abs(int(man))).bit_length() - 1
        best = e if best is None else max(best, e)
    return 0 if best is None else best


def frobenius_upper(A: Any) -> Any:
    """An exact ``arb`` upper bound of ``||A||_F`` over every matrix in the ball ``A``."""
    from flint import arb

    total = arb(0)
    for v in A.entries():
        if v.is_zero():
            continue
        u = v.abs_upper()
        total += u * u
    return total.sqrt().upper()


def max_ball(xs: Sequence[Any]) -> Any:
    """A ball enclosing the largest of the Arb balls ``xs``."""
    out = xs[0]
    for x in xs[1:]:
        out = out.max(x)
    return out


def min_ball(xs: Sequence[Any]) -> Any:
    """A ball enclosing the smallest of the Arb balls ``xs``."""
    out = xs[0]
    for x in xs[1:]:
        out = out.min(x)
    return out


def decimal_outward(x: Any, digits: int) -> tuple[str, str]:
    """Decimal strings ``lo <= every point of x <= hi`` with about ``digits``
    significant digits (the lower end rounded down, the upper end rounded up)."""
    bits = bits_for_digits(digits) + 64
    with working_precision(bits):
        return _decimal(x.lower(), digits, down=True), _decimal(x.upper(), digits, down=False)


def _decimal(v: Any, digits: int, down: bool) -> str:
    """An exact ``arb`` ``v`` as a decimal string rounded down (or up)."""
    if v.is_zero():
        return "0"
    mid, rad, exp = v.mid_rad_10exp(bits_for_digits(max(digits, 1)))
    m = int(mid) - int(rad) if down else int(mid) + int(rad)
    # drop the extra digits Arb adds, rounding in the same direction
    extra = len(str(abs(m))) - max(digits, 1)
    if extra > 0:
        q, r = divmod(m, 10**extra)  # floor division: q <= m / 10^extra
        m = q if down or r == 0 else q + 1
        exp = int(exp) + extra
    return _format(m, int(exp))


def _format(m: int, e: int) -> str:
    """The decimal ``m * 10^e`` as a string (scientific when far from 1)."""
    if m == 0:
        return "0"
    sign = "-" if m < 0 else ""
    text = str(abs(m)).rstrip("0")
    e += len(str(abs(m))) - len(text)
    point = len(text) + e  # digits before the decimal point
    if -6 < point <= 21:
        if e >= 0:
            return sign + text + "0" * e
        if point > 0:
            return sign + text[:point] + "." + text[point:]
        return sign + "0." + "0" * (-point) + text
    mant = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{sign}{mant}e{point - 1:+d}"


def significant_digits(x: Any) -> int:
    """Significant digits every point of the ball ``x`` shares with its midpoint:
    ``floor(-log10(rad / min |x|))`` (``0`` when the ball contains zero)."""
    from flint import arb

    if x.rad().is_zero():
        return 10**6
    lo = x.abs_lower()
    if lo <= 0:
        return 0
    u = (arb(x.rad()) / lo).upper()
    if u.is_zero():
        return 10**6
    # -log10 in Arb: a float64 rel would flush to zero below 1e-308 (dps > 308)
    bound = (-(u.log() / arb(10).log())).lower().floor()
    return max(0, int(bound.unique_fmpz()))


def identity(n: int) -> Any:
    """The ``n x n`` identity ``arb_mat``."""
    from flint import arb_mat

    out = arb_mat(n, n)
    for i in range(n):
        out[i, i] = 1
    return out
