"""Ball evaluation of an observable's SymPy expression (python-flint ``arb``).

:func:`ball_value` evaluates an expression (:func:`derive.evaluation.walk`) on
balls: the result contains the exact value of the expression at every point of
the input balls, rounding errors of the evaluation included.  At exact inputs
(radius zero) the radius is the rounding error alone -- the digits an
evaluation in floating point would silently lose to cancellation (``s1**2 -
2*s1*s2 + s2**2`` at ``s1 ~ s2``); on a box of inputs it bounds the values
over the box.  Non-smooth pieces are enclosed too: ``sign``/``Heaviside`` of a
ball straddling zero are the balls ``[-1, 1]``/``[0, 1]``, ``DiracDelta`` of
it is unbounded (``nan``), and of a ball away from zero it is exactly ``0``.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import sympy as sp

from numeric.certified.arb import to_arb


def _span(lo: Any, hi: Any) -> Any:
    """The ball spanning the exact endpoints ``lo <= hi``."""
    return lo.union(hi)


def _int_power(x: Any, n: int) -> Any:
    """``x**n`` for an integer ``n`` without the overestimate of ``arb_pow`` on balls
    that are not positive (``(-3 +/- 1)**2`` is ``[4, 16]``, not ``[+/- 16]``)."""
    from flint import arb

    if n < 0:
        return 1 / _int_power(x, -n)
    if n == 0:
        return arb(1)
    if x > 0:
        return x**n
    if x < 0:
        return _int_power(-x, n) * (-1 if n % 2 else 1)
    lo, hi = x.lower(), x.upper()
    if not (lo.is_finite() and hi.is_finite()):
        return arb.nan()
    if n % 2:
        return _span(_int_power(lo, n), _int_power(hi, n))
    top = max(abs(lo), abs(hi), key=lambda v: v.upper())
    return _span(arb(0), _int_power(top, n))


def _power(x: Any, e: Any) -> Any:
    """``x**e``: integer powers of any ball, other real powers of ``x >= 0`` only
    (``e`` a :class:`fractions.Fraction` or a SymPy number:
    :func:`derive.evaluation.exact_number`)."""
    from flint import arb

    if isinstance(e, Fraction) and e.denominator == 1:
        return _int_power(x, int(e))
    if not isinstance(e, Fraction) and e.is_Integer:
        return _int_power(x, int(e))
    if not x >= 0:
        return arb.nan()
    if e == Fraction(1, 2):
        return x.sqrt()
    if x > 0:
        return x ** to_arb("exponent", e)
    if e > 0:  # monotone on [0, hi]
        return _span(arb(0), x.upper() ** to_arb("exponent", e))
    return arb.nan()


def _sign(x: Any) -> Any:
    from flint import arb

    if x > 0:
        return arb(1)
    if x < 0:
        return arb(-1)
    if x == 0:
        return arb(0)
    return _span(arb(-1), arb(1))


def _heaviside(x: Any, h0: Any = None) -> Any:
    from flint import arb

    if x > 0:
        return arb(1)
    if x < 0:
        return arb(0)
    at0 = to_arb("Heaviside(0)", Fraction(1, 2) if h0 is None else h0)
    if x == 0:
        return at0
    return _span(arb(0), arb(1)).union(at0)


def _delta(x: Any, *order: Any) -> Any:
    from flint import arb

    return arb(0) if (x > 0 or x < 0) else arb.nan()


def _minmax(pick_min: bool) -> Any:
    def f(*xs: Any) -> Any:
        out = xs[0]
        for x in xs[1:]:
            out = out.min(x) if pick_min else out.max(x)
        return out

    return f


def _number(q: sp.Expr) -> Any:
    from flint import arb

    if q is sp.pi:
        return arb.pi()
    if q is sp.E:
        return arb(1).exp()
    return to_arb("constant", q)


def _sum(xs: list[Any]) -> Any:
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out


def _product(xs: list[Any]) -> Any:
    out = xs[0]
    for x in xs[1:]:
        out = out * x
    return out


def _log(x: Any) -> Any:
    from flint import arb

    return x.log() if x > 0 else arb.nan()


def ball_arithmetic() -> Any:
    """The :class:`derive.evaluation.Arithmetic` of ``arb`` balls."""
    from derive.evaluation import Arithmetic

    return Arithmetic(
        number=_number,
        add=_sum,
        mul=_product,
        power=_power,
        functions={
            "exp": lambda x: x.exp(),
            "log": _log,
            "Abs": abs,
            "Min": _minmax(True),
            "Max": _minmax(False),
            "sign": _sign,
            "Heaviside": _heaviside,
            "DiracDelta": _delta,
        },
    )


def ball_value(expr: sp.Expr, leaves: dict[sp.Symbol, Any]) -> Any:
    """The ``arb`` ball of ``expr`` at the balls ``leaves`` (symbol -> ``arb``), in
    the current ``flint.ctx.prec`` (``nan`` where it is not a finite real number)."""
    from derive.evaluation import compile_plan

    return ball_values(compile_plan([expr]), {s.name: v for s, v in leaves.items()})[0]


def ball_values(plan: Any, leaves: Mapping[str, Any]) -> list[Any]:
    """The ``arb`` ball of each expression of ``plan`` (a :class:`derive.evaluation.Plan`)
    at the balls ``leaves`` (symbol name -> ``arb``), as :func:`ball_value`; no SymPy."""
    from derive.evaluation import run

    return [v if v.is_finite() else v.nan() for v in run(plan, leaves, ball_arithmetic())]
