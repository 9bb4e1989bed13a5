"""The start of a model: the caller's, else the model's reference point, else the origin.

:func:`start_point` reads it at the working precision and checks it against the
model's declared state space (:func:`snap_into_space`: float round-off onto the
boundary is snapped, anything farther out refused in one sentence); every route
reads it through the prepared problem (:mod:`numeric.prepared.problem`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import mpmath
from mpmath import mpf

from mfstein.ground.errors import ParameterError, caller_level
from numeric.precision import to_mpf
from numeric.rate_signs import ROUND_ULPS


def declared_mpf(name: str, value: Any) -> mpf:
    """A number from a model declaration (SymPy number, int, str, float) as mpf."""
    from derive.models.stored import StoredRational

    if isinstance(value, StoredRational):  # a stored model's: read as the Rational it was
        return mpf(int(value.numerator)) / int(value.denominator)
    if "sympy" not in sys.modules:  # then no SymPy number exists
        return to_mpf(name, value)
    import sympy as sp

    if isinstance(value, sp.Rational):
        return mpf(int(value.p)) / int(value.q)
    if isinstance(value, sp.Basic):
        if not value.is_number:
            raise ParameterError(f"{name} must be a number, got {value}.")
        return mpmath.mpf(str(sp.N(value, mpmath.mp.dps + 10)))
    return to_mpf(name, value)


def declared_fraction(value: Any) -> Fraction | None:
    """A coordinate of a declared point (a model's fixed reference point) as an exact
    :class:`~fractions.Fraction`: integers, fractions, SymPy and stored rationals
    exactly, floats at their binary value, SymPy floats and text by their decimal
    digits (as :func:`mfstein.ground.numbers.parse_real` reads them); ``None`` when it
    is no exact rational (a SymPy expression such as ``sqrt(2)``)."""
    from mfstein.ground.numbers import parse_real

    if isinstance(value, Fraction):  # (a StoredRational too)
        return Fraction(value)
    if "sympy" in sys.modules:
        import sympy as sp

        if isinstance(value, sp.Rational):
            return Fraction(int(value.p), int(value.q))
        if isinstance(value, sp.Basic):
            value = str(sp.sympify(value))
    try:
        return parse_real("start", value)
    except ParameterError:
        return None


def start_point(model: Any, start: Sequence[Any] | None, values: Mapping[str, mpf]) -> list[mpf]:
    """The initial state: the caller's ``start``, else the model's reference point,
    else the origin; checked against the state space (current precision)."""
    b = model.n
    if start is None:
        ref = model.info.reference
        if callable(ref):
            ref = ref(values)
        if ref is None:
            from derive.model import default_start

            ref = default_start(model)
        raw = list(ref) if ref is not None else [0] * b
        what = "the model's reference point"
    else:
        if isinstance(start, str):
            start = [t for t in start.split(",") if t.strip()]
        raw = list(start)
        what = "start"
    if len(raw) != b:
        raise ParameterError(
            f"{what} must have {b} coordinates (one per state of model {model.name}), "
            f"got {len(raw)}."
        )
    s = [declared_mpf("start", v) for v in raw]
    s = snap_into_space(model, s, what)
    check = getattr(model, "check_state_space", None)
    if check is not None:  # the faces the conservation laws through this start meet
        check([Fraction(mpmath.nstr(v, 30)) for v in s])
    return s


#: A start within this many float64 ulps (relative to 1 and to the total) of the
#: state space's boundary is snapped onto it: the round-off of a start typed in
#: decimals or computed in float64, not a different start.
SNAP_ULPS = ROUND_ULPS


def snap_into_space(model: Any, s: list[mpf], what: str = "start") -> list[mpf]:
    """``s`` checked against the model's declared state space, float round-off snapped.

    Coordinates within :data:`SNAP_ULPS` float64 ulps below 0 (above 1 for box
    and monotone spaces) are set to the bound, and for a simplex whose sum is
    conserved by every jump (``s_1 + ... + s_b == total``, as for SIR) a sum
    within that many ulps of the total is made exact by adjusting the largest
    coordinate (for any other simplex a sum that many ulps above the total is
    brought down to it the same way: ``0.2 + 0.8`` in float64); a warning says so
    in one line.  Anything farther out is refused
    in one sentence (:class:`ParameterError`): a start off the state space is
    another process, not this one.
    """
    import warnings

    space = model.info.state_space
    b = len(s)
    tol = mpf(SNAP_ULPS) * mpf(2) ** -52 * max(mpf(1), abs(mpf(space.total)))
    snapped = list(s)
    upper = space.kind in ("box", "monotone")
    for i, v in enumerate(snapped):
        if -tol <= v < 0:
            snapped[i] = mpf(0)
        elif upper and 1 < v <= 1 + tol:
            snapped[i] = mpf(1)
    if space.kind == "monotone":
        for i in range(1, b):
            if snapped[i - 1] < snapped[i] <= snapped[i - 1] + tol:
                snapped[i] = snapped[i - 1]
    # an inferred simplex (conserving jumps, no declaration): the start fixes the sum,
    # which may be below 1 (a cache filled to 70%), never above
    conserved = space.kind == "simplex" and space.declared and _sum_conserved(model)
    if space.kind == "simplex":
        total = declared_mpf("total", space.total)
        gap = total - mpmath.fsum(snapped)
        # a conserved sum must equal the total, any other must not exceed it
        if (gap != 0 if conserved else gap < 0) and abs(gap) <= tol:
            k = max(range(b), key=lambda i: snapped[i])
            snapped[k] += gap
    shown = ", ".join(mpmath.nstr(v, 8) for v in s)
    where = space.describe(b)
    if conserved:
        where = f"s_i >= 0, s_1 + ... + s_{b} = {space.total:g} (every jump conserves the sum)"
        if abs(mpmath.fsum(snapped) - total) > 0:
            raise ParameterError(
                f"{what} must lie in the state space {where} of model {model.name}, got "
                f"({shown}), whose sum is {mpmath.nstr(mpmath.fsum(s), 8)}."
            )
    if not space.contains(snapped, tol=0):
        raise ParameterError(
            f"{what} must lie in the state space {where} of model {model.name}, got ({shown})."
        )
    if snapped != s:
        message = (
            f"{what} ({shown}) was moved onto the state space {where} by at most "
            f"{mpmath.nstr(max(abs(a - c) for a, c in zip(s, snapped, strict=True)), 2)} "
            "(float round-off)."
        )
        if message not in _SNAPPED:  # once, not at every working precision
            _SNAPPED.add(message)
            warnings.warn(message, stacklevel=caller_level())
    return snapped


#: Snapping messages already shown in this process.
_SNAPPED: set[str] = set()


def _sum_conserved(model: Any) -> bool:
    """Whether every jump leaves ``s_1 + ... + s_b`` unchanged."""
    return all(sum(t.jump) == 0 for t in model.transitions)
