"""Exact conversions between ``mpf`` numbers and integers or floats, on their raw form.

An ``mpf`` is ``(-1)^sign man 2^exp`` with an odd mantissa ``man`` of ``bc`` bits (its
raw tuple ``x._mpf_ = (sign, man, exp, bc)``).  Iterative refinement
(:mod:`numeric.linalg.refinement`) turns every matrix entry into an integer at a
common scale and every solution entry back into an ``mpf``: tens of thousands of
conversions per 30-digit sweep.  Through mpmath's context each one builds
intermediate ``mpf`` objects (``nint(ldexp(v, F))``); the functions here give the
same numbers from the mantissa and the exponent with integer operations:

* :func:`exponent` -- ``floor(log2 max|v|)``, exactly ``exp + bc - 1`` of the largest
  entry.  The former ``floor(log(big, 2))`` at the working precision can differ from
  that where ``|big|`` lies within a few units of the precision of a power of two (the
  logarithm rounds onto the integer); there, and for an exact power of two, the former
  expression itself is evaluated, so both give the same integer everywhere.
* :func:`scaled_int` -- ``int(nint(ldexp(v, F)))``: the shift is exact; ``nint`` rounds
  to the nearest integer (ties to even) and then to the working precision, a no-op
  unless the integer has more bits than the precision (then mpmath itself rounds).
* :func:`mpf_of_int` -- ``ldexp(mpf(k), -F)``: ``k`` rounded to the working precision
  (mpmath's own :func:`mpmath.libmp.from_int`), then shifted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import mpmath
from mpmath import libmp, mpf

#: Bits kept clear of a power of two by :func:`exponent`'s fast answer: the
#: logarithm at ``prec`` bits errs by a few units of ``2^-prec`` times its size.
_MARGIN_BITS = 12


def _slow_exponent(values: list[Any]) -> int:
    """``floor(log2 max|v|)`` as mpmath evaluates it at the working precision."""
    big = max((abs(v) for v in values), default=mpf(0))
    return 0 if big == 0 else int(mpmath.floor(mpmath.log(big, 2)))


def _near_power_of_two(man: int, bc: int, top: int, prec: int) -> bool:
    """Whether ``man 2^exp`` (``bc`` bits, ``floor(log2) = top``) lies so close to
    ``2^top`` or ``2^(top + 1)`` that a ``prec``-bit logarithm may round onto them."""
    if man == 1:  # exactly 2^top: the logarithm (20 guard bits, one rounding) is top
        return False
    k = max(prec - _MARGIN_BITS - abs(top).bit_length(), 1)
    low = 1 << (bc - 1)  # 2^top at this mantissa's scale
    return ((man - low) << k) < low or (((low << 1) - man) << (k - 1)) < low


def exponent(values: Iterable[Any]) -> int:
    """``floor(log2 max|v|)`` over the ``mpf`` (or int) ``values``, ``0`` if all
    vanish: the same integer as ``floor(log(max|v|, 2))`` at the working precision
    (module docstring)."""
    vals = list(values)
    prec = mpmath.mp.prec
    best = None
    risky = False
    for v in vals:
        raw = getattr(v, "_mpf_", None)
        if raw is None or (not raw[1] and raw[2]):  # not an mpf, or inf/nan
            return _slow_exponent(vals)
        _, man, exp, bc = raw
        if not man:
            continue
        top = exp + bc - 1
        if best is None or top > best:
            best, risky = top, _near_power_of_two(man, bc, top, prec)
        elif top == best and not risky:
            risky = _near_power_of_two(man, bc, top, prec)
    if best is None:
        return 0
    return _slow_exponent(vals) if risky else best


def scaled_int(v: Any, F: int) -> int:
    """``int(nint(ldexp(v, F)))`` for an ``mpf`` ``v`` at the working precision
    (module docstring): ``v 2^F`` rounded to the nearest integer, ties to even."""
    raw = getattr(v, "_mpf_", None)
    if raw is None:
        return int(mpmath.nint(mpmath.ldexp(v, F)))
    sign, man, exp, bc = raw
    if not man:
        if exp:  # inf or nan: as mpmath (it raises)
            return int(mpmath.nint(mpmath.ldexp(v, F)))
        return 0
    e = exp + F
    if e >= 0:
        if bc > mpmath.mp.prec:
            return int(mpmath.nint(mpmath.ldexp(v, F)))
        k = man << e
    elif e + bc < 0:
        return 0
    else:
        k = man >> -e
        rem = man - (k << -e)
        half = 1 << (-e - 1)
        if rem > half or (rem == half and k & 1):
            k += 1
        if k.bit_length() > mpmath.mp.prec:
            return int(mpmath.nint(mpmath.ldexp(v, F)))
    return int(-k if sign else k)


def float_of_scaled(v: Any, shift: int) -> float:
    """``float(ldexp(v, shift))`` (nearest float64 of the exact ``v 2^shift``)."""
    raw = getattr(v, "_mpf_", None)
    if raw is None:
        return float(mpmath.ldexp(v, shift))
    return libmp.to_float(libmp.mpf_shift(raw, shift), rnd=libmp.round_nearest)


def mpf_of_int(k: int, F: int) -> mpf:
    """``ldexp(mpf(k), -F)``: the integer ``k`` rounded to the working precision,
    times ``2^-F``."""
    raw = libmp.from_int(int(k), mpmath.mp.prec, libmp.round_nearest)
    return mpmath.mp.make_mpf(libmp.mpf_shift(raw, -F))
