"""Closed forms in ``lam`` for buffers ``b = 1`` and ``b = 2`` (Po2: ``d = 2``, ``mu = 1``).

For the supermarket model with replacement, summing ``f_j(s^*) = 0`` over
``j >= k`` gives the shooting recursion

    s^*_k = lam ((s^*_{k-1})^2 - (s^*_b)^2),   k = 1..b,   s^*_0 = 1,

so every ``s^*_k`` is a polynomial in ``x = s^*_b`` and ``x`` is a root of
``x = lam (s_{b-1}(x)^2 - x^2)``, a polynomial of degree ``2^b`` in ``x``:

* ``b = 1``: ``lam x^2 + x - lam = 0`` -- a quadratic,
  ``s^*_1 = (sqrt(1 + 4 lam^2) - 1) / (2 lam)``;
* ``b = 2``: ``lam^3 x^4 - (2 lam^3 + lam) x^2 - x + lam^3 = 0`` -- a quartic,
  solved by Ferrari's radicals (SymPy's ``roots``, about 0.1 s).  Its resolvent
  cubic has three real roots for ``lam`` near 1 (casus irreducibilis), so the
  radicals pass through complex numbers even though ``s^*_2`` is real; the
  expression is explicit but long (about 560 operations);
* ``b = 3``: the octic ``x = lam (lam^2 (lam^2 (1 - x^2)^2 - x^2)^2 - x^2)``
  is irreducible over ``Q(lam)`` (and over ``Q`` already at ``lam = 1/2``:
  ``x^8 - 12 x^6 + 38 x^4 - 76 x^2 - 128 x + 1``).  A general degree-8
  equation has no solution in radicals, and SymPy finds none: ``roots`` returns
  ``{}`` and ``solve`` ``[]`` (both in well under a second) -- only ``CRootOf``
  remains.  **Closed forms stop being tractable at b = 3**; from there on use
  ``numeric`` (Newton / shooting at any precision), or the formulas of
  :mod:`derive.stein` in the symbols ``s^*_k``, which stay exact for every ``b``.

The right root is the one with ``0 < s^*_b <= ... <= s^*_1 < 1`` for
``0 < lam < 1``; it is chosen by evaluating every candidate at sample values of
``lam`` (:data:`ROOT_CHECK_LAMBDAS`) to 30 digits.

The dominant constant is ``c = 2 tr(P F~) = tr(P Q(s^*))`` with
``P J(s^*) + J(s^*)^T P = -I``: ``E ||S - s^*||^2 ~ c / N``.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Any

import mpmath
import sympy as sp

from derive.model import LAM
from derive.models.supermarket import supermarket
from derive.stein import (
    dominant_term,
    jacobian_at_equilibrium,
    solve_lyapunov,
    sstar_symbols,
)
from mfstein.ground.errors import ParameterError, check_int

#: Values of ``lam`` at which the physical root is identified (and must stay valid).
ROOT_CHECK_LAMBDAS: tuple[sp.Rational, ...] = (
    sp.Rational(1, 10),
    sp.Rational(1, 2),
    sp.Rational(9, 10),
    sp.Rational(99, 100),
)

#: The buffers for which closed forms exist (see the module docstring for why not b = 3).
TRACTABLE_B: tuple[int, ...] = (1, 2)


@dataclass(frozen=True)
class ClosedForm:
    """Explicit functions of ``lam`` for one buffer ``b`` (``d = 2``, ``mu = 1``)."""

    #: Buffer size.
    b: int
    #: ``[s^*_1, ..., s^*_b]`` as expressions in ``lam``.
    s_star: list[sp.Expr]
    #: ``J(s^*)`` with ``s^*`` substituted.
    J: sp.Matrix
    #: Solution of ``P J + J^T P = -I``, in ``lam``.
    P: sp.Matrix
    #: ``2 tr(P F~) = tr(P Q(s^*))`` in ``lam``.
    c: sp.Expr
    #: ``P`` in the symbols ``sstar_k`` (compact; before substituting ``s^*``).
    P_in_sstar: sp.Matrix
    #: ``c`` in the symbols ``sstar_k``.
    c_in_sstar: sp.Expr
    #: The polynomial in ``x = s^*_b`` whose root ``s^*_b`` is.
    polynomial: sp.Expr


def shooting_polynomial(b: int, x: sp.Symbol) -> tuple[sp.Expr, list[sp.Expr]]:
    """Return ``(p(x), [s_1(x), ..., s_b(x)])`` from ``s_k = lam (s_{k-1}^2 - x^2)``.

    ``p(x) = lam (s_{b-1}(x)^2 - x^2) - x`` vanishes at ``x = s^*_b``; its
    degree is ``2^b``.
    """
    b = check_int("b", b, 1)
    prev = sp.Integer(1)
    levels = []
    for _ in range(b - 1):
        prev = LAM * (prev**2 - x**2)
        levels.append(prev)
    poly = sp.expand(LAM * (prev**2 - x**2) - x)
    return poly, [*levels, x]


@functools.lru_cache(maxsize=256)
def _mpmath_function(expr: sp.Expr):
    return sp.lambdify(LAM, expr, modules="mpmath")


def evaluate(expr: sp.Expr, lam: object, dps: int = 30) -> mpmath.mpc:
    """Evaluate a closed form at ``lam`` with mpmath at ``dps`` digits.

    The ``b = 2`` radicals take principal complex branches (as SymPy defines
    them), so the value is an ``mpc`` whose imaginary part is rounding noise;
    ``lam`` may be a string, number, ``sympy.Rational`` or mpf.  The expression
    is compiled once with :func:`sympy.lambdify` (mpmath module), which is far
    faster than ``sp.N`` on the long radical expressions.
    """
    fn = _mpmath_function(sp.sympify(expr))
    with mpmath.workdps(dps):
        x = mpmath.mpf(lam.p) / lam.q if isinstance(lam, sp.Rational) else mpmath.mpf(lam)
        return mpmath.mpc(fn(x))


def _physical(values: list[sp.Expr], lam: sp.Rational) -> bool:
    """``0 < v_b <= ... <= v_1 < 1`` for numerically evaluated (nearly real) values."""
    nums = []
    for v in values:
        z = evaluate(v, lam)
        if abs(z.imag) > 1e-20:
            return False
        nums.append(z.real)
    return 0 < nums[-1] and all(a >= b for a, b in itertools.pairwise(nums)) and (nums[0] < 1)


def _canonical(expr: sp.Expr) -> sp.Expr:
    """Re-parse ``str(expr)`` until it is a fixed point (one pass in practice)."""
    for _ in range(3):
        again = sp.sympify(str(expr))
        if again == expr:
            return expr
        expr = again
    raise ArithmeticError("closed form does not reach a printable canonical form.")


def _generic_branch(expr: sp.Expr) -> sp.Expr:
    """Drop ``Piecewise`` branches whose condition ``Eq(u(lam), v(lam))`` has no
    solution with ``0 < lam < 1``; Ferrari's formula in SymPy guards a degenerate
    case (for ``b = 2``: ``16 lam^4 + 4 lam^2 + 1 = 0``, which has no real root)."""

    def pick(pw: sp.Piecewise) -> sp.Expr:
        for value, cond in pw.args:
            if cond is sp.true:
                return value
            if not isinstance(cond, sp.Eq):
                return pw
            sols = sp.solveset(sp.together(cond.lhs - cond.rhs), LAM, sp.Interval.open(0, 1))
            if sols != sp.S.EmptySet:
                return pw
        return pw

    return expr.replace(lambda e: isinstance(e, sp.Piecewise), pick)


@functools.cache
def equilibrium_closed_form(b: int) -> list[sp.Expr]:
    """``[s^*_1, ..., s^*_b]`` in radicals of ``lam`` (``b`` in :data:`TRACTABLE_B`)."""
    b = check_int("b", b, 1)
    if b not in TRACTABLE_B:
        raise ParameterError(
            f"b must be 1 or 2 for closed forms (s*_b solves a degree-2^b polynomial), got {b}."
        )
    x = sp.Symbol("x")
    poly, levels = shooting_polynomial(b, x)
    if b == 1:
        candidates = [
            (sp.sqrt(4 * LAM**2 + 1) - 1) / (2 * LAM),
            -(sp.sqrt(4 * LAM**2 + 1) + 1) / (2 * LAM),
        ]
    else:
        candidates = [_generic_branch(r) for r in sp.roots(sp.Poly(poly, x))]
    for root in candidates:
        if all(_physical([lev.subs(x, root) for lev in levels], lv) for lv in ROOT_CHECK_LAMBDAS):
            return [lev.subs(x, root) for lev in levels]
    raise ArithmeticError(f"no radical root of the b = {b} equilibrium is physical on (0, 1).")


@functools.cache
def closed_form(b: int) -> ClosedForm:
    """All closed forms for buffer ``b`` (1 or 2), ``d = 2``, ``mu = 1``, with replacement.

    ``P`` is solved symbolically in the symbols ``s^*`` first
    (:func:`derive.stein.solve_lyapunov`), then ``s^*(lam)`` is substituted.
    """
    b = check_int("b", b, 1)
    # Ferrari's radicals come out of roots() partly unevaluated (e.g. -2*(a + b)
    # kept as a product); re-parsing the short pieces puts them in the form that
    # sympify(str(.)) returns, and xreplace() keeps the substituted results in
    # that form, so printed closed forms parse back to identical objects.
    s_star = [_canonical(e) for e in equilibrium_closed_form(b)]
    model = supermarket(b, 2)
    sub = dict(zip(sstar_symbols(b), s_star, strict=True))
    P_sym = solve_lyapunov(model).applyfunc(_canonical)
    c_sym = _canonical(sp.factor(sp.simplify(dominant_term(model, P_sym) * sp.Symbol("N"))))
    J = jacobian_at_equilibrium(model).xreplace(sub)
    P = P_sym.xreplace(sub)
    c = c_sym.xreplace(sub)
    if b == 1:
        # small enough to simplify; for b = 2 simplify() on the quartic's radicals
        # runs for many minutes without shortening them.
        J = J.applyfunc(lambda e: _canonical(sp.simplify(e)))
        P = P.applyfunc(lambda e: _canonical(sp.simplify(e)))
        c = _canonical(sp.simplify(c))
    return ClosedForm(
        b=b,
        s_star=s_star,
        J=J,
        P=P,
        c=c,
        P_in_sstar=P_sym,
        c_in_sstar=c_sym,
        polynomial=shooting_polynomial(b, sp.Symbol("x"))[0],
    )


def closed_form_parts(b: int) -> dict[str, Any]:
    """The closed forms of :func:`closed_form` that ``mfstein derive --show closed-form``
    prints: ``s_star``, ``J``, ``P``, ``c``, ``P_in_sstar`` and ``c_in_sstar``."""
    cf = closed_form(b)
    return {
        "s_star": list(cf.s_star),
        "J": cf.J,
        "P": cf.P,
        "c": cf.c,
        "P_in_sstar": cf.P_in_sstar,
        "c_in_sstar": cf.c_in_sstar,
    }


def closed_form_latex(b: int) -> str:
    """``s^*_k(lam)``, ``J(s^*)``, ``P`` and ``c = 2 tr(P F~)`` for ``b`` in (1, 2), in
    the paper's notation (:func:`derive.latex_print.object_latex`)."""
    from derive.latex_print import object_latex

    return object_latex("closed-form", closed_form_parts(b))
