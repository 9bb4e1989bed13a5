"""Signs of a model's rates: the one rule every route applies, and its sentences.

A population process jumps at intensities ``N beta_l(s) >= 0``; a negative or
non-finite ``beta_l`` on the state space is no Markov chain, so ``solve``,
``transient``, ``exact`` and ``simulate`` refuse it in one sentence.  The
states they check are float64 numbers (a fixed point, ``x(t)`` of an ODE
solver, a decimal start, a lattice point ``n / N``), so a rate that vanishes
exactly on a face of the state space -- ``(10 x0 + 1/10)(1 - x0 - x1)`` on
``x0 + x1 = 1`` -- evaluates to a few ulps of either sign there.  The rule:

* the *terms bound* ``B_l(s)`` of a rate is the rate with every sum replaced
  by the sum of the absolute values of its terms (through products and
  positive integer powers; any other node by its absolute value,
  :func:`terms_bound`): the size of the numbers that cancel in it;
* a rate is negative only when it is below
  ``-ROUNDING * max(B_l(s), B_l(|s| + 1))`` (:func:`allowance_exprs`: the
  second term for coordinates that carry an absolute error, as a float64
  fixed point's ``-5e-33`` for an exact ``0``), with :data:`ROUNDING` =
  :data:`ROUND_ULPS` float64 unit round-offs -- the same number of ulps
  within which a start is snapped onto the state space
  (:func:`numeric.prepared.start.snap_into_space`); values above that are
  the rounding of an exact zero and count as zero.

Exact evaluations (rational arithmetic at lattice points,
:class:`numeric.exact.lattice.ExactRates`) need no allowance; they share the
sentences (:func:`negative_rate`, :func:`unevaluable`, :func:`not_finite`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.errors import ParameterError

#: A state or a rate within this many float64 ulps of its bound is its round-off.
ROUND_ULPS = 64
#: The float64 unit round-off.
UNIT_ROUNDOFF = 2.0**-53
#: Relative allowance of a rate's sign, in units of its terms bound.
ROUNDING = ROUND_ULPS * UNIT_ROUNDOFF

#: Lambdified terms bounds by model key.
_BOUNDS: dict[Any, Any] = {}


def terms_bound(expr: Any) -> Any:
    """``B(expr)``: sums become sums of absolute values of their terms, recursively
    through products and positive integer powers; any other node (a symbol, a
    function, a quotient) is its absolute value.  ``|expr| <= B(expr)`` everywhere,
    and the rounding error of evaluating ``expr`` from inputs with relative error
    ``u`` is a modest multiple of ``u B(expr)``."""
    import sympy as sp

    if isinstance(expr, sp.Add):
        return sp.Add(*[terms_bound(a) for a in expr.args])
    if isinstance(expr, sp.Mul):
        return sp.Mul(*[terms_bound(a) for a in expr.args])
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer and expr.exp > 0:
        return terms_bound(expr.base) ** expr.exp
    return sp.Abs(expr)


def allowance_exprs(model: Any) -> list[Any]:
    """The rounding allowance of every rate (SymPy, in transition order):
    ``ROUNDING * max(B(s), B(|s| + 1))`` -- the terms bound ``B`` of the rate
    (:func:`terms_bound`) for the relative rounding of the evaluation and of the
    inputs, and its value with every coordinate moved out by ``1`` for a state whose
    coordinates carry an absolute error of ``ROUNDING`` too (a float64 fixed point
    with ``-5e-33`` where the exact one has ``0``).  Python (:func:`allowance`) and
    the compiled simulator (:mod:`sim.generic_kernels`) evaluate these expressions."""
    import sympy as sp

    # real stand-ins while the bound is formed: |exp(-x)| of a complex x is
    # exp(-re(x)), which no back end prints; of a real one it is exp(-x)
    real = {x: sp.Dummy(x.name, real=True) for x in (*model.states, *model.params)}
    back = {v: k for k, v in real.items()}
    shift = {real[x]: sp.Abs(real[x]) + 1 for x in model.states}
    out = []
    for t in model.transitions:
        B = terms_bound(sp.sympify(t.rate).xreplace(real))
        # unevaluated: SymPy's search for dominated arguments took seconds per rate
        bound = sp.Max(B, B.xreplace(shift), evaluate=False)
        out.append((sp.Float(ROUNDING) * bound).xreplace(back))
    return out


def _allowances(model: Any) -> Any:
    """:func:`allowance_exprs` as one mpmath function of ``(s, p)`` (cached)."""
    fn = _BOUNDS.get(model.key)
    if fn is None:
        from derive.backends import lambdify

        fn = lambdify(
            [list(model.states), list(model.params)], allowance_exprs(model), "mpmath"
        )
        _BOUNDS[model.key] = fn
    return fn


def allowance(model: Any, s: Sequence[Any], p: Sequence[Any]) -> list[mpf]:
    """The rounding allowance of every rate at ``s`` (:func:`allowance_exprs`); zero
    where it cannot be evaluated, so that only the rate's own sign decides."""
    with mpmath.workdps(max(mpmath.mp.dps, 30)):
        sm = [_mp(v) for v in s]
        pm = [_mp(v) for v in p]
        try:
            values = list(_allowances(model)(sm, pm))
        except (ZeroDivisionError, ValueError, OverflowError, TypeError):
            return [mpf(0)] * len(model.transitions)
        return [abs(mpf(v)) if mpmath.isfinite(v) else mpf(0) for v in values]


def _mp(v: Any) -> mpf:
    """A float, int, :class:`~fractions.Fraction` or ``mpf`` as ``mpf``."""
    if isinstance(v, Fraction):
        return mpf(v.numerator) / v.denominator
    return v if isinstance(v, mpf) else mpf(v)


def state_text(model: Any, s: Sequence[Any]) -> str:
    """``x = 0.5, y = 1/4``: a state for a sentence (fractions exact, else 8 digits)."""

    def show(v: Any) -> str:
        return str(v) if isinstance(v, Fraction) else mpmath.nstr(_mp(v), 8)

    return ", ".join(f"{x} = {show(v)}" for x, v in zip(model.states, s, strict=True))


def _name(model: Any, t: int) -> str:
    tr = model.transitions[t]
    return tr.label or str(tr.jump)


def negative_rate(model: Any, t: int, value: Any, where: str, state: str) -> ParameterError:
    """The sentence for transition ``t``'s negative rate ``value`` at a state."""
    shown = mpmath.nstr(_mp(value), 6)
    return ParameterError(
        f"transition {_name(model, t)} of model {model.name} has the negative rate {shown} at "
        f"{where} ({state}); a population process needs rates >= 0 on its state space "
        "(check the parameters and factory options)."
    )


def not_finite(model: Any, t: int, where: str, state: str) -> ParameterError:
    """The sentence for transition ``t``'s infinite or undefined rate at a state."""
    return ParameterError(
        f"transition {_name(model, t)} of model {model.name} has a rate that is not finite at "
        f"{where} ({state}); a population process needs finite rates."
    )


def unevaluable(model: Any, where: str, state: str) -> ParameterError:
    """The sentence for rates that raise (a division by zero, a logarithm of 0)."""
    return ParameterError(
        f"the rates of model {model.name} cannot be evaluated at {where} ({state})."
    )


def _finite(v: Any) -> bool:
    if isinstance(v, mpf):
        return bool(mpmath.isfinite(v))
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError, OverflowError):
        return False


def check_values(
    model: Any, values: Sequence[Any] | None, s: Sequence[Any], p: Sequence[Any], where: str
) -> None:
    """Refuse rates ``values`` evaluated at the state ``s`` (float64 or mpmath numbers;
    ``None`` if their evaluation raised): one sentence for the first transition whose
    rate is not finite or negative beyond its rounding allowance (module docstring)."""
    if values is None:
        raise unevaluable(model, where, state_text(model, s))
    for t, v in enumerate(values):
        if not _finite(v):
            raise not_finite(model, t, where, state_text(model, s))
    if all(v >= 0 for v in values):
        return
    room = allowance(model, s, p)
    for t, v in enumerate(values):
        if v < 0 and -_mp(v) > room[t]:
            raise negative_rate(model, t, v, where, state_text(model, s))


_MIN, _MAX = np.minimum.reduce, np.maximum.reduce


def check_values64(
    model: Any, values: np.ndarray, s: np.ndarray, p: np.ndarray, where: str
) -> None:
    """:func:`check_values` of float64 rates ``values`` at the float64 state ``s``: two
    reductions when every rate is finite and ``>= 0`` (a warm call's usual case: the
    smallest is ``>= 0`` and the largest below ``inf``; a NaN fails both), else
    :func:`check_values` itself for its sentence."""
    if not values.size or (_MIN(values, axis=None) >= 0 and _MAX(values, axis=None) < np.inf):
        return
    check_values(model, values.tolist(), s.tolist(), p.tolist(), where)


def check_rates(model: Any, s: Sequence[Any], p: Sequence[Any], where: str) -> None:
    """Refuse a state at which some rate is negative or not finite (one sentence
    naming the transition and the state): only population processes are answered,
    and ``N beta_l(s)`` is a jump intensity only when it is finite and ``>= 0``.

    ``s`` and ``p`` are numbers of any kind, evaluated in mpmath at 30 digits; a
    negative value within the rounding allowance of its terms (module docstring)
    counts as the round-off of a rate that vanishes.
    """
    kmp = model.kernels("mpmath")
    with mpmath.workdps(30):
        sm = [mpf(v) if not isinstance(v, mpf) else v for v in s]
        pm = [mpf(v) if not isinstance(v, mpf) else v for v in p]
        try:
            vals: list[Any] | None = list(kmp.rates(sm, pm))
        except (ZeroDivisionError, ValueError, OverflowError):
            vals = None
        check_values(model, vals, sm, pm, where)


def singular_derivative(model: Any, s: Sequence[Any], p: Sequence[Any]) -> str | None:
    """Where the drift has no finite derivative at the state ``s`` (parameters ``p``,
    in kernel order): ``"the rate sqrt(y) of transition (0, -1) has no finite
    derivative in y at y = 0"`` for the first rate and state coordinate whose
    partial derivative is infinite or undefined there (SymPy, exact), else ``None``."""
    import sympy as sp

    point = {x: sp.nsimplify(float(v)) for x, v in zip(model.states, s, strict=True)}
    point.update({q: sp.nsimplify(float(v)) for q, v in zip(model.params, p, strict=True)})
    for t, tr in enumerate(model.transitions):
        for x in model.states:
            if x not in tr.rate.free_symbols:
                continue
            try:
                d = complex(sp.diff(tr.rate, x).xreplace(point).evalf(20))
            except (TypeError, ValueError, ZeroDivisionError):
                d = complex("nan")
            if not (math.isfinite(d.real) and math.isfinite(d.imag)):
                return (
                    f"the rate {tr.rate} of transition {_name(model, t)} has no finite "
                    f"derivative in {x} at {x} = {mpmath.nstr(_mp(float(point[x])), 8)}"
                )
    return None
