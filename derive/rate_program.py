"""SymPy expressions compiled to programs of a stack machine, for an event loop
that is compiled once and reads any model from arrays (:mod:`sim.table_loop`).

A model's intensities ``beta_t(s)`` (and the observables an event loop
integrates) are functions of the densities ``s`` and the parameters ``p``.
The per-model loop of :mod:`sim.generic_kernels` prints them as Python source
and has numba compile them: seconds of typing and lowering for every new model.
Here each expression becomes a short postfix program instead -- a row of
``(op, arg)`` pairs over a value stack -- which one compiled interpreter
evaluates for every model.  The programs hold numbers only (no SymPy), so they
travel in a JSON record and to worker processes like the jump vectors.

Operations (:data:`derive.rate_ops.OPS`): push a constant, a density ``s[k]`` or a parameter
``p[j]``; ``+ - * /`` and negation; integer powers (``arg`` the exponent) and
real powers; ``sqrt exp log abs sign``, trigonometric and hyperbolic functions;
``Min``/``Max`` (pairwise, as Python's ``min``/``max`` compare); ``Heaviside``
(the value at zero on the stack); comparisons, ``and``/``or``/``not`` (1.0 or
0.0); and ``select``, which keeps one of two values by a condition (every
branch of a ``Piecewise`` is evaluated, then one is kept: a NaN or an infinity
in a branch not taken is dropped).  The semantics are those of the numba
printer's code (:mod:`derive.backends`): ``Heaviside(x, h0)`` is ``0`` for
``x < 0``, ``h0`` at ``0`` and ``1`` otherwise (NaN included); ``sign`` is
``0`` at ``0`` and ``copysign(1, x)`` otherwise.  Anything else -- a function
outside this list, a symbol that is neither a state nor a parameter -- is
refused in one sentence (:class:`mfstein.ground.errors.ParameterError`), so a caller
can fall back to the per-model loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp

from derive.rate_ops import OP
from mfstein.ground.errors import ParameterError

_UNARY = {
    sp.exp: "exp", sp.log: "log", sp.Abs: "abs", sp.sign: "sign",
    sp.sin: "sin", sp.cos: "cos", sp.tan: "tan", sp.asin: "asin", sp.acos: "acos",
    sp.atan: "atan", sp.sinh: "sinh", sp.cosh: "cosh", sp.tanh: "tanh",
}  # fmt: skip
_RELATIONS = {
    sp.StrictLessThan: "lt", sp.LessThan: "le", sp.StrictGreaterThan: "gt",
    sp.GreaterThan: "ge", sp.Equality: "eq", sp.Unequality: "ne",
}  # fmt: skip
#: What the programs evaluate (the sentence of a refusal names it).
SUPPORTED = (
    "+ - * /, powers, sqrt, exp, log, Abs, sign, Min, Max, Heaviside, Piecewise, "
    "comparisons, And/Or/Not, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh"
)


@dataclass(frozen=True)
class Programs:
    """Compiled expressions: program ``i`` is the rows ``code[ptr[i]:ptr[i + 1]]``
    of ``(op, arg)`` pairs; ``consts`` holds the constants the ``const`` rows index;
    ``depth`` is the deepest stack any program needs.  Plain tuples: hashable,
    picklable and JSON-ready."""

    code: tuple[tuple[int, int], ...]
    ptr: tuple[int, ...]
    consts: tuple[float, ...]
    depth: int

    def reads(self, i: int) -> list[int]:
        """The coordinates ``k`` whose density ``s[k]`` program ``i`` reads (sorted)."""
        rows = self.code[self.ptr[i] : self.ptr[i + 1]]
        return sorted({arg for op, arg in rows if op == OP["state"]})


class _Emitter:
    """Postfix code of one expression after another, sharing one constant table."""

    def __init__(self, states: Sequence[sp.Symbol], params: Sequence[sp.Symbol]) -> None:
        self.index = {x: ("state", k) for k, x in enumerate(states)}
        self.index.update({q: ("param", j) for j, q in enumerate(params)})
        self.code: list[tuple[int, int]] = []
        self.consts: list[float] = []
        self.depth = 0
        self.high = 0

    def emit(self, name: str, arg: int = 0, pops: int = 0, pushes: int = 1) -> None:
        self.code.append((OP[name], int(arg)))
        self.depth += pushes - pops
        self.high = max(self.high, self.depth)

    def const(self, value: float) -> None:
        self.consts.append(float(value))
        self.emit("const", len(self.consts) - 1)

    def expr(self, e: Any, whole: Any) -> None:
        """Emit ``e`` (a part of ``whole``, named in a refusal)."""
        if e is sp.true or e is sp.false:
            return self.const(1.0 if e is sp.true else 0.0)
        if isinstance(e, sp.Symbol):
            if e not in self.index:
                raise ParameterError(
                    f"the interpreted event loop reads only the states and parameters, not "
                    f"the symbol {e} (in {sp.sstr(whole)[:80]})."
                )
            return self.emit(*self.index[e])
        if e.is_Number or isinstance(e, sp.NumberSymbol):
            return self.const(float(e))
        if isinstance(e, sp.Add | sp.Mul):
            return self._nary(e, whole)
        if isinstance(e, sp.Pow):
            return self._pow(e, whole)
        if isinstance(e, sp.Min | sp.Max | sp.And | sp.Or):
            name = {sp.Min: "min", sp.Max: "max", sp.And: "and", sp.Or: "or"}[type(e)]
            return self._fold(e.args, name, whole)
        if isinstance(e, sp.Piecewise):
            return self._piecewise(e.args, whole)
        if isinstance(e, sp.Heaviside):
            self.expr(e.args[0], whole)
            self.const(e.args[1] if len(e.args) > 1 else sp.Rational(1, 2))
            return self.emit("heaviside", pops=2)
        if isinstance(e, sp.Not):
            self.expr(e.args[0], whole)
            return self.emit("not", pops=1)
        kind = _RELATIONS.get(type(e))
        if kind is not None:
            return self._fold(e.args, kind, whole)
        unary = _UNARY.get(type(e))
        if unary is not None and len(e.args) == 1:
            self.expr(e.args[0], whole)
            return self.emit(unary, pops=1)
        raise ParameterError(
            f"the interpreted event loop cannot evaluate {type(e).__name__} (in "
            f"{sp.sstr(whole)[:80]}); it evaluates {SUPPORTED}."
        )

    def _fold(self, args: Sequence[Any], name: str, whole: Any) -> None:
        self.expr(args[0], whole)
        for a in args[1:]:
            self.expr(a, whole)
            self.emit(name, pops=2)

    def _nary(self, e: Any, whole: Any) -> None:
        """A sum, or a product whose factors ``x**-k`` divide (``a/b`` as printed)."""
        if isinstance(e, sp.Add):
            return self._fold(e.args, "add", whole)
        coeff, factors = e.as_coeff_mul()
        num = [f for f in factors if not _is_reciprocal(f)]
        den = [f for f in factors if _is_reciprocal(f)]
        negate = coeff == -1
        if coeff not in (1, -1) or not num:
            self.const(coeff)
            negate = False
            self._fold_more(num, "mul", whole)
        else:
            self._fold(num, "mul", whole)
        for f in den:
            base, power = f.as_base_exp()
            self.expr(base if power == -1 else sp.Pow(base, -power, evaluate=False), whole)
            self.emit("div", pops=2)
        if negate:
            self.emit("neg", pops=1)

    def _fold_more(self, args: Sequence[Any], name: str, whole: Any) -> None:
        for a in args:
            self.expr(a, whole)
            self.emit(name, pops=2)

    def _pow(self, e: Any, whole: Any) -> None:
        base, power = e.args
        if power == sp.Rational(1, 2):
            self.expr(base, whole)
            return self.emit("sqrt", pops=1)
        if power == sp.Rational(-1, 2):
            self.const(1.0)
            self.expr(base, whole)
            self.emit("sqrt", pops=1)
            return self.emit("div", pops=2)
        if base is sp.E:
            self.expr(power, whole)
            return self.emit("exp", pops=1)
        if power.is_Integer and abs(int(power)) < 2**31:
            self.expr(base, whole)
            return self.emit("powi", int(power), pops=1)
        self.expr(base, whole)
        self.expr(power, whole)
        self.emit("pow", pops=2)

    def _piecewise(self, pairs: Sequence[Any], whole: Any) -> None:
        """``e0 if c0 else (e1 if c1 else ...)``: every branch, then ``select``."""
        (value, cond), rest = pairs[0], pairs[1:]
        if cond is sp.true:
            return self.expr(value, whole)
        self.expr(value, whole)
        if rest:
            self._piecewise(rest, whole)
        else:
            self.const(float("nan"))  # undefined where no condition holds
        self.expr(cond, whole)
        self.emit("select", pops=3)


def _is_reciprocal(f: Any) -> bool:
    return isinstance(f, sp.Pow) and f.args[1].is_Integer and f.args[1] < 0


def compile_programs(
    exprs: Sequence[Any], states: Sequence[sp.Symbol], params: Sequence[sp.Symbol]
) -> Programs:
    """The programs of ``exprs`` (SymPy expressions in ``states`` -- read as the
    densities ``s[k]`` -- and ``params`` -- read as ``p[j]``), in order.

    Raises :class:`mfstein.ground.errors.ParameterError` (one sentence) for what the
    interpreter does not evaluate (module docstring)."""
    em = _Emitter(states, params)
    ptr = [0]
    for e in exprs:
        whole = sp.sympify(e)
        em.depth = 0
        em.expr(whole, whole)
        ptr.append(len(em.code))
    return Programs(tuple(em.code), tuple(ptr), tuple(em.consts), max(em.high, 1))


@dataclass(frozen=True)
class PolynomialForms:
    """Expressions that are polynomials in the states, as sums of monomials.

    Expression ``i`` is a polynomial when ``flags[i]``; its monomials are
    ``m in range(ptr[i], ptr[i + 1])``, monomial ``m`` is ``coefficients[m]`` (a SymPy
    expression in the parameters only, constant during a run) times
    ``prod s[k] ** e`` over the pairs ``(k, e)`` of ``factors[fac_ptr[m]:fac_ptr[m + 1]]``.
    """

    flags: tuple[bool, ...]
    ptr: tuple[int, ...]
    fac_ptr: tuple[int, ...]
    factors: tuple[tuple[int, int], ...]
    coefficients: tuple[Any, ...]


def polynomial_forms(exprs: Sequence[Any], states: Sequence[sp.Symbol]) -> PolynomialForms:
    """The monomials of each of ``exprs`` that is a polynomial in ``states`` (with
    coefficients free of them); the others are flagged ``False`` and have none."""
    flags, ptr, fac_ptr, factors, coefficients = [], [0], [0], [], []
    position = {x: k for k, x in enumerate(states)}
    for e in exprs:
        e = sp.sympify(e)
        gens = sorted(e.free_symbols & set(states), key=position.__getitem__)
        terms = _monomials(e, gens)
        flags.append(terms is not None)
        for exps, coeff in terms or ():
            for x, power in zip(gens, exps, strict=True):
                if power:
                    factors.append((position[x], int(power)))
            fac_ptr.append(len(factors))
            coefficients.append(coeff)
        ptr.append(len(coefficients))
    return PolynomialForms(
        tuple(flags), tuple(ptr), tuple(fac_ptr), tuple(factors), tuple(coefficients)
    )


def _monomials(e: Any, gens: Sequence[sp.Symbol]) -> list[tuple[tuple[int, ...], Any]] | None:
    """``[(exponents, coefficient), ...]`` of ``e`` as a polynomial in ``gens``, or
    ``None`` when it is not one."""
    if not gens:
        return [((), e)]
    if not e.is_polynomial(*gens):
        return None
    try:
        poly = sp.Poly(e, *gens)
    except sp.PolynomialError:
        return None
    terms = poly.terms()
    if any(c.free_symbols & set(gens) for _, c in terms):
        return None
    return [(tuple(int(x) for x in exps), c) for exps, c in terms]
