"""Numbers held as whole integers scaled by ``2^P`` (the fixed-point arithmetic of
:mod:`numeric.expansion.transient_heterogeneous`): reading a float or an ``mpf`` exactly
into that form, back to ``mpf``, and zero arrays of Python integers.  Its own module
so that the fixed-point system and its averaged moves both read it from below."""

from __future__ import annotations

import mpmath
import numpy as np


def to_fixed(value: mpmath.mpf | float, P: int) -> int:
    """``round(value 2^P)`` of a float or an ``mpf`` of any precision, read exactly (not
    rounded to the current working precision first); halves round up."""
    v = value if isinstance(value, mpmath.mpf) else mpmath.mpf(float(value))
    man, exp = v.man_exp
    man, shift = int(man), int(exp) + P
    fixed = man << shift if shift >= 0 else (man + (1 << (-shift - 1))) >> -shift
    return -fixed if v < 0 else fixed


def from_fixed(values: np.ndarray, P: int) -> np.ndarray:
    """Integers scaled by ``2^P`` as ``mpf`` at the current working precision (same shape)."""
    flat = [mpmath.ldexp(mpmath.mpf(int(v)), -P) for v in values.flat]
    return np.array(flat, dtype=object).reshape(values.shape)


def zeros(shape: int | tuple[int, ...]) -> np.ndarray:
    """An object array of Python integers 0."""
    out = np.empty(shape, dtype=object)
    out[...] = 0
    return out
