"""Evaluating an observable's SymPy expression without generating code.

``sympy.lambdify`` prints an expression to Python source and compiles it: a sum
of a few thousand terms overflows the compiler's recursion limit, and the
printers do not know the functions that differentiating ``Abs``, ``Min`` and
``Max`` introduces (``sign``, ``Heaviside``, ``DiracDelta``).  Here an
expression is evaluated by walking its tree once, bottom-up and without
recursion (every distinct sub-expression once), with the arithmetic of a back
end: :func:`walk` takes the back end as an :class:`Arithmetic`, and
:data:`NUMPY` is the float64/longdouble array one (the ball one, which bounds
rounding errors, is :mod:`numeric.certified.expression`).

:data:`SUPPORTED` lists the functions every back end evaluates;
:func:`unsupported` names any other one, so that an observable is refused at
parse time, not deep inside a back end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

#: Function name -> SymPy class: what every back end evaluates (``sqrt`` and
#: powers are ``Pow``; the last three arise only as derivatives).
SUPPORTED: dict[str, Any] = {
    "exp": sp.exp,
    "log": sp.log,
    "Abs": sp.Abs,
    "Min": sp.Min,
    "Max": sp.Max,
    "sign": sp.sign,
    "Heaviside": sp.Heaviside,
    "DiracDelta": sp.DiracDelta,
}


@dataclass(frozen=True)
class Arithmetic:
    """A back end of :func:`walk`: how to make a number and apply each operation.

    ``number(q)`` turns a number into a value: a rational as a
    :class:`fractions.Fraction`, any other one as its SymPy number (``Float``,
    ``pi``, ``E``; :func:`exact_number`); ``add(xs)``, ``mul(xs)``; ``power(x, e)``
    with ``e`` the exponent (a number, as ``number`` gets it) and ``x`` the base's
    value -- a symbolic exponent goes through ``exp(e log x)``; ``functions`` maps
    each name of :data:`SUPPORTED` to a function of the argument values
    (``Heaviside``/``DiracDelta`` also receive their extra arguments, numbers as
    ``number`` gets them: ``H(0)``, the derivative order).
    """

    number: Callable[[Any], Any]
    add: Callable[[list[Any]], Any]
    mul: Callable[[list[Any]], Any]
    power: Callable[[Any, Any], Any]
    functions: Mapping[str, Callable[..., Any]]


def _name(node: sp.Basic) -> str | None:
    for name, cls in SUPPORTED.items():
        if node.func is cls:
            return name
    return None


def unsupported(expr: sp.Basic) -> list[str]:
    """Names of the functions in ``expr`` that no back end evaluates (sorted)."""
    bad = set()
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Function) or (
            isinstance(node, sp.Basic) and node.func in (sp.Min, sp.Max)
        ):
            if _name(node) is None:
                bad.add(str(node.func))
        elif isinstance(node, sp.Derivative | sp.Integral | sp.Piecewise):
            bad.add(type(node).__name__)
    return sorted(bad)


def _order(exprs: list[sp.Basic]) -> list[sp.Basic]:
    """The distinct nodes of ``exprs``, each after its arguments (no recursion)."""
    done: set[sp.Basic] = set()
    out: list[sp.Basic] = []
    stack: list[tuple[sp.Basic, bool]] = [(e, False) for e in reversed(exprs)]
    while stack:
        node, ready = stack.pop()
        if node in done:
            continue
        if ready or not node.args or node.is_Number:
            done.add(node)
            out.append(node)
            continue
        stack.append((node, True))
        stack.extend((a, False) for a in node.args if a not in done)
    return out


def exact_number(q: Any) -> Any:
    """A SymPy number as the back ends read it: a rational as a
    :class:`fractions.Fraction` (read without SymPy), any other one (a ``Float``,
    ``pi``, ``E``) as it is."""
    if getattr(q, "is_Rational", False):
        return Fraction(int(q.p), int(q.q))
    return q


@dataclass(frozen=True)
class Plan:
    """Expressions compiled for :func:`run`: the distinct nodes, each after its
    arguments, as steps ``(kind, a, b)`` that hold no SymPy object but the numbers
    that are not rational (:func:`exact_number`), so that evaluating a plan calls
    no SymPy.  ``outputs``: the step of each expression; ``symbols``: the names of
    the symbols it reads."""

    steps: tuple[tuple[str, Any, Any], ...]
    outputs: tuple[int, ...]
    symbols: frozenset[str]


def compile_plan(exprs: list[sp.Basic]) -> Plan:
    """The :class:`Plan` of ``exprs`` (sub-expressions they share are one step).

    Raises :class:`ValueError` naming a function outside :data:`SUPPORTED`
    (callers refuse those first, :func:`unsupported`)."""
    where: dict[sp.Basic, int] = {}
    steps: list[tuple[str, Any, Any]] = []
    for node in _order(exprs):
        if node.is_Symbol:
            step: tuple[str, Any, Any] = ("symbol", node.name, None)
        elif node.is_Number or node in (sp.pi, sp.E):
            step = ("number", exact_number(node), None)
        elif node.is_Add or node.is_Mul:
            step = ("add" if node.is_Add else "mul", tuple(where[a] for a in node.args), None)
        elif node.is_Pow:
            base, e = node.args
            if e.is_Number:
                step = ("power", where[base], exact_number(e))
            else:
                step = ("exp_log", where[base], where[e])
        else:
            name = _name(node)
            if name is None:
                raise ValueError(f"no back end evaluates {node.func}.")
            extra = tuple(exact_number(a) for a in node.args[1:])
            if name not in ("Heaviside", "DiracDelta"):
                step = ("function", name, tuple(where[a] for a in node.args))
            else:
                step = ("function", name, (where[node.args[0]], *[("value", v) for v in extra]))
        where[node] = len(steps)
        steps.append(step)
    symbols = frozenset(a for kind, a, _ in steps if kind == "symbol")
    return Plan(tuple(steps), tuple(where[e] for e in exprs), symbols)


def run(plan: Plan, leaves: Mapping[str, Any], arith: Arithmetic) -> list[Any]:
    """The value of each expression of ``plan`` with each symbol replaced by
    ``leaves[name]`` (no SymPy: the steps hold none); :class:`KeyError` for a
    symbol without a value."""
    values: list[Any] = []
    for kind, a, b in plan.steps:
        if kind == "symbol":
            values.append(leaves[a])
        elif kind == "number":
            values.append(arith.number(a))
        elif kind == "add":
            values.append(arith.add([values[i] for i in a]))
        elif kind == "mul":
            values.append(arith.mul([values[i] for i in a]))
        elif kind == "power":
            values.append(arith.power(values[a], b))
        elif kind == "exp_log":
            log = arith.functions["log"](values[a])
            values.append(arith.functions["exp"](arith.mul([values[b], log])))
        else:
            args = [i[1] if isinstance(i, tuple) else values[i] for i in b]
            values.append(arith.functions[a](*args))
    return [values[i] for i in plan.outputs]


def walk(expr: sp.Basic, leaves: Mapping[sp.Symbol, Any], arith: Arithmetic) -> Any:
    """The value of ``expr`` with each symbol replaced by ``leaves[symbol]``
    (:func:`run` of its :func:`compile_plan`).

    Raises :class:`KeyError` for a symbol without a value and :class:`ValueError`
    naming a function outside :data:`SUPPORTED` (callers check both first).
    """
    return run(compile_plan([expr]), {s.name: v for s, v in leaves.items()}, arith)[0]


def _np_reduce(op: Callable[[Any, Any], Any]) -> Callable[[list[Any]], Any]:
    def reduce(xs: list[Any]) -> Any:
        out = xs[0]
        for x in xs[1:]:
            out = op(out, x)
        return out

    return reduce


def numpy_arithmetic(dtype: Any) -> Arithmetic:
    """Element-wise arithmetic on NumPy arrays of ``dtype`` (``float64`` or
    ``longdouble``): numbers are rounded once to ``dtype`` from their exact value."""
    import operator

    import numpy as np

    def number(q: Any) -> Any:
        q = exact_number(q)
        if isinstance(q, Fraction):
            return dtype(q.numerator) / dtype(q.denominator)
        return dtype(str(sp.Float(q, 25)))

    def heaviside(x: Any, h0: Any = None) -> Any:
        at0 = number(Fraction(1, 2) if h0 is None else h0)
        return np.where(x > 0, dtype(1), np.where(x < 0, dtype(0), at0))

    def delta(x: Any, *order: Any) -> Any:
        return np.where(x != 0, dtype(0), dtype(np.nan))

    def power(x: Any, e: Any) -> Any:
        e = exact_number(e)
        if isinstance(e, Fraction) and e.denominator == 1:
            return x ** int(e) if int(e) >= 0 else 1 / x ** (-int(e))
        if e == Fraction(1, 2):
            return np.sqrt(x)
        return np.power(x, number(e))

    return Arithmetic(
        number=number,
        add=_np_reduce(operator.add),
        mul=_np_reduce(operator.mul),
        power=power,
        functions={
            "exp": np.exp,
            "log": np.log,
            "Abs": np.abs,
            "Min": lambda *xs: _np_reduce(np.minimum)(list(xs)),
            "Max": lambda *xs: _np_reduce(np.maximum)(list(xs)),
            "sign": np.sign,
            "Heaviside": heaviside,
            "DiracDelta": delta,
        },
    )
