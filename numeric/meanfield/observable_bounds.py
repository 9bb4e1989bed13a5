"""The derivatives of an observable at ``s*`` with certified error bounds.

The expansion of ``E[g(S_N)]`` (:mod:`numeric.meanfield.observables`) needs
``g`` and its derivatives up to order four at the fixed point.  Two errors
enter each value, and both are bounded here with ball arithmetic
(:mod:`numeric.certified.expression`):

* the rounding error of evaluating the expression at the computed ``s*``: the
  radius of its ball at the exact computed point.  Cancellation (``s1**2 -
  2*s1*s2 + s2**2`` at ``s1 ~ s2``) shows up here; the precision is doubled (at
  most :data:`RAISES` times) until it is below the value's last requested digit
  or below the next error;
* the error of ``s*`` itself (norm-wise ``err_s``, from the digits it claims):
  by the mean value theorem ``|D(s) - D(s*)| <= err_s sum_j sup |d_j D|``, the
  sup over the box ``s* +/- err_s`` of the next derivative's ball (for the
  fourth derivatives, whose fifth are not formed, the ball over the box itself).

An error is ``inf`` where a ball is not finite (``g`` not smooth or not
defined somewhere in the box): that term then earns no digit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mpmath
from mpmath import mpf

from mfstein.ground.errors import ParameterError
from numeric.prepared.observables import ORDER  # the highest derivative order formed

#: Most doublings of the ball precision while rounding still dominates.
RAISES = 3

Index = tuple[int, ...]


@dataclass(frozen=True)
class DerivativeBounds:
    """``values[k][idx]``: the ``k``-th derivative of ``g`` at ``s*`` (sorted index
    tuples, zero entries omitted; midpoints as ``mpf``) and ``errors[k][idx]`` an
    upper bound of its distance to the derivative at the exact fixed point."""

    values: list[dict[Index, mpf]]
    errors: list[dict[Index, mpf]]


def to_mpf(x: Any) -> mpf:
    """The exact midpoint of the ``arb`` ball ``x`` as an ``mpf``."""
    man, exp = x.mid().man_exp()
    return mpmath.ldexp(mpf(int(man)), int(exp))


def _upper(x: Any) -> mpf:
    """An upper bound of ``|x|`` (``inf`` for a ball that is not finite)."""
    if not x.is_finite():
        return mpf("inf")
    man, exp = x.abs_upper().mid().man_exp()
    return mpmath.ldexp(mpf(int(man)), int(exp)) * (1 + mpf(2) ** -50)


def _radius(x: Any) -> mpf:
    if not x.is_finite():
        return mpf("inf")
    man, exp = x.rad().mid().man_exp()
    return mpmath.ldexp(mpf(int(man)), int(exp))


def derivative_bounds(
    model: Any,
    obs: Any,
    s_star: list[mpf],
    err_s: mpf,
    params: Mapping[str, Any],
    dps: int,
) -> DerivativeBounds:
    """The derivatives of ``obs`` (a :class:`numeric.prepared.observables.PreparedObservable`,
    whose derivatives and their plan are made once) at ``s_star``, each with the error
    bound of the module docstring.

    ``params`` are the parameter values (decimal strings or ``mpf``, read exactly);
    ``dps`` the digits requested of the expansion.  Raises
    :class:`mfstein.ground.errors.ParameterError` when ``g`` itself is not a finite real
    number at ``s*``.
    """
    from numeric.certified.arb import bits_for_digits, to_arb, working_precision

    tensors = obs.derivatives
    used = obs.used_params
    missing = sorted(p for p in used if p not in params)
    if missing:
        raise ParameterError(
            f"observable {obs.name!r} needs a value of parameter {', '.join(missing)}."
        )
    bits = bits_for_digits(dps + 10)
    for attempt in range(RAISES + 1):
        with working_precision(bits):
            fixed = {p: to_arb(p, params[p]) for p in used}
            names = [x.name for x in model.states]
            point = {**fixed, **{x: to_arb("s*", v) for x, v in zip(names, s_star, strict=True)}}
            spread = to_arb("error of s*", err_s) * to_arb("unit", 1).union(to_arb("-1", -1))
            box = {**fixed, **{x: point[x] + spread for x in names}}
            bounds, rounding_dominates = _bounds(obs, tensors, point, box, err_s, dps, model.n)
        if not rounding_dominates or attempt == RAISES:
            return bounds
        bits *= 2
    raise AssertionError("unreachable")


def _bounds(
    obs: Any,
    tensors: Any,
    point: dict[Any, Any],
    box: dict[Any, Any],
    err_s: mpf,
    dps: int,
    b: int,
) -> tuple[DerivativeBounds, bool]:
    """The bounds at the current ball precision, and whether rounding still costs
    digits (a value's rounding radius above both its requested last digit and
    its error from ``s*``)."""
    from numeric.certified.expression import ball_values

    at = tensors.split(ball_values(tensors.plan, point))
    over = tensors.split(ball_values(tensors.plan, box))
    g0 = at[0][()]
    if not g0.is_finite():
        raise ParameterError(
            f"observable {obs.name!r} is not a finite real number at the fixed point s*."
        )
    values: list[dict[Index, mpf]] = []
    errors: list[dict[Index, mpf]] = []
    dominated = False
    tenth = mpf(10) ** -(dps + 1)
    for k, level in enumerate(at):
        values.append({idx: to_mpf(v) if v.is_finite() else mpf(0) for idx, v in level.items()})
        errs: dict[Index, mpf] = {}
        for idx, v in level.items():
            rounding = _radius(v)
            if err_s == 0:
                moved = mpf(0)
            elif k < ORDER:
                nxt = over[k + 1]
                moved = err_s * mpmath.fsum(
                    _upper(nxt[key]) for j in range(b) if (key := tuple(sorted((*idx, j)))) in nxt
                )
            else:
                w = over[k][idx]
                finite = w.is_finite()
                moved = _radius(w) + abs(to_mpf(w) - values[k][idx]) if finite else mpf("inf")
            errs[idx] = rounding + moved
            if (
                mpmath.isfinite(rounding)
                and rounding > moved
                and rounding > tenth * abs(values[k][idx])
            ):
                dominated = True
        errors.append(errs)
    return DerivativeBounds(values, errors), dominated
