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

    ``number(q)`` turns a SymPy number (``Integer``, ``Rational``, ``Float``) into a
    value; ``add(xs)``, ``mul(xs)``; ``power(x, e)`` with ``e`` the SymPy exponent
    and ``x`` the base's value (``e`` a number) -- a symbolic exponent goes through
    ``exp(e log x)``; ``functions`` maps each name of :data:`SUPPORTED` to a
    function of the argument values (``Heaviside``/``DiracDelta`` also receive
    their extra SymPy arguments: ``H(0)``, the derivative order).
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


def _order(expr: sp.Basic) -> list[sp.Basic]:
    """The distinct nodes of ``expr``, each after its arguments (no recursion)."""
    done: set[sp.Basic] = set()
    out: list[sp.Basic] = []
    stack: list[tuple[sp.Basic, bool]] = [(expr, False)]
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


def walk(expr: sp.Basic, leaves: Mapping[sp.Symbol, Any], arith: Arithmetic) -> Any:
    """The value of ``expr`` with each symbol replaced by ``leaves[symbol]``.

    Raises :class:`KeyError` for a symbol without a value and :class:`ValueError`
    naming a function outside :data:`SUPPORTED` (callers check both first).
    """
    values: dict[sp.Basic, Any] = {}
    for node in _order(expr):
        if node.is_Symbol:
            values[node] = leaves[node]
        elif node.is_Number or node in (sp.pi, sp.E):
            values[node] = arith.number(node)
        elif node.is_Add:
            values[node] = arith.add([values[a] for a in node.args])
        elif node.is_Mul:
            values[node] = arith.mul([values[a] for a in node.args])
        elif node.is_Pow:
            base, e = node.args
            if e.is_Number:
                values[node] = arith.power(values[base], e)
            else:
                log = arith.functions["log"](values[base])
                values[node] = arith.functions["exp"](arith.mul([values[e], log]))
        else:
            name = _name(node)
            if name is None:
                raise ValueError(f"no back end evaluates {node.func}.")
            args = [values[a] for a in node.args]
            if name in ("Heaviside", "DiracDelta"):
                args = [args[0], *node.args[1:]]
            values[node] = arith.functions[name](*args)
    return values[expr]


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

    def number(q: sp.Expr) -> Any:
        if q.is_Rational:
            return dtype(int(q.p)) / dtype(int(q.q))
        return dtype(str(sp.Float(q, 25)))

    def heaviside(x: Any, h0: Any = None) -> Any:
        at0 = number(sp.Rational(1, 2) if h0 is None else sp.sympify(h0))
        return np.where(x > 0, dtype(1), np.where(x < 0, dtype(0), at0))

    def delta(x: Any, *order: Any) -> Any:
        return np.where(x != 0, dtype(0), dtype(np.nan))

    def power(x: Any, e: sp.Expr) -> Any:
        if e.is_Integer:
            return x ** int(e) if int(e) >= 0 else 1 / x ** (-int(e))
        if e == sp.Rational(1, 2):
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
