"""Observables: the functions of the state that users measure, and their derivatives.

An observable is a function ``g`` of the state ``s`` (and of the model's
parameters): a mean queue length ``sum_k s_k``, a utilisation ``s_1``, the
fraction infected ``I``, a blocking probability ``s_b^d``.  It is given as

* the name of one the model declares (``model.info.observables``, e.g.
  ``"queue_length"``),
* a SymPy expression in the model's state symbols and parameters, or
* a string, parsed with :func:`sympy.parsing.sympy_parser.parse_expr` after a
  whitelist check of its syntax tree (numbers, the model's symbols, ``+ - * /
  **``/``^`` and a few elementary functions; nothing else is evaluated),

or ``"quadratic"`` / ``("quadratic", M)``, the core paper's
``N E[(S - s*)^T M (S - s*)]`` (which depends on ``s*`` and ``N`` and is
handled by numeric as such; ``M`` as in :func:`numeric.solve`).

:func:`derivatives` returns the derivative tensors of ``g`` up to order four
(sparse, one entry per sorted index tuple) that the expansion of ``E[g(S_N)]``
in powers of ``1/N`` contracts with the moment coefficients ``V, W, A, B, C``
(:mod:`numeric.expansion.observables`; Gast, Bortolussi and Tribastone, "Size expansions
of mean field approximation: transient and steady-state analysis").
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sympy as sp

from mfstein.errors import ParameterError

if TYPE_CHECKING:
    from derive.model import Model

#: Functions an observable string may call (name -> SymPy function).
FUNCTIONS: dict[str, Any] = {
    "sqrt": sp.sqrt,
    "exp": sp.exp,
    "log": sp.log,
    "Abs": sp.Abs,
    "abs": sp.Abs,
    "Min": sp.Min,
    "Max": sp.Max,
}
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.BitXor, ast.USub, ast.UAdd)
#: Name of the quadratic observable of the core paper.
QUADRATIC = "quadratic"


@dataclass(frozen=True)
class Observable:
    """A parsed observable.

    ``expr`` is a SymPy expression in ``model.states`` and ``model.params``
    (``None`` for the quadratic one, whose matrix ``M`` is then in ``M``);
    ``name`` is the declared name, or the expression as text.
    """

    name: str
    expr: sp.Expr | None
    M: Any = None

    @property
    def quadratic(self) -> bool:
        """Whether this is ``N E[(S - s*)^T M (S - s*)]``."""
        return self.expr is None

    def __str__(self) -> str:
        if self.quadratic:
            return "N E[(S - s*)^T M (S - s*)]"
        return self.name if self.name == str(self.expr) else f"{self.name} = {self.expr}"


def declared(model: Model) -> dict[str, sp.Expr]:
    """The observables the model declares, name -> expression (``{}`` when none)."""
    obs = getattr(model.info, "observables", None) or {}
    out: dict[str, sp.Expr] = {}
    for name, expr in obs.items():
        out[name] = parse_expression(model, expr) if isinstance(expr, str) else sp.sympify(expr)
    return out


def check_syntax(text: str, what: str = "observable") -> None:
    """Refuse (one sentence) any syntax but numbers, names, ``+ - * / ** ^`` and
    calls of :data:`FUNCTIONS`: nothing else reaches ``eval``."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise ParameterError(f"{what} {text!r} is not a valid expression (syntax error).") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Expression | ast.BinOp | ast.UnaryOp | ast.Load | ast.Name):
            continue
        if isinstance(node, _OPERATORS):
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            continue
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in FUNCTIONS
            and not node.keywords
        ):
            continue
        raise ParameterError(
            f"{what} {text!r} may only hold numbers, symbols, + - * / ** "
            f"and the functions {', '.join(sorted(FUNCTIONS))}."
        )


def parse_expression(model: Model, text: str) -> sp.Expr:
    """The string ``text`` as a SymPy expression in the model's symbols only.

    Raises :class:`mfstein.errors.ParameterError` (one sentence) on a syntax
    error, a symbol the model does not have, or an expression that is not a
    finite real number wherever it is defined (``1/0``, ``nan``).
    """
    from sympy.parsing.sympy_parser import convert_xor, parse_expr, standard_transformations

    if not isinstance(text, str) or not text.strip():
        raise ParameterError(f"observable must be a non-empty expression, got {text!r}.")
    check_syntax(text)
    symbols = {str(s): s for s in (*model.states, *model.params)}
    names = {
        node.id
        for node in ast.walk(ast.parse(text.strip(), mode="eval"))
        if isinstance(node, ast.Name)
    } - set(FUNCTIONS)
    unknown = sorted(names - set(symbols))
    if unknown:
        raise ParameterError(
            f"observable {text!r} uses {', '.join(unknown)}, which is not a symbol of model "
            f"{model.name} (its symbols are {', '.join(symbols)})."
        )
    glob: dict[str, Any] = {
        "__builtins__": {},
        "Integer": sp.Integer,
        "Float": sp.Float,
        "Rational": sp.Rational,
        "Symbol": sp.Symbol,
        **FUNCTIONS,
    }
    try:
        expr = parse_expr(
            text.strip(),
            local_dict=dict(symbols),
            global_dict=glob,
            transformations=(*standard_transformations, convert_xor),
            evaluate=True,
        )
    except (SyntaxError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise ParameterError(
            f"observable {text!r} is not a valid expression ({type(exc).__name__})."
        ) from None
    return check_expression(model, expr, text)


def check_expression(model: Model, expr: Any, what: Any = None) -> sp.Expr:
    """``expr`` if it is a real SymPy expression in the model's symbols, else one sentence."""
    what = expr if what is None else what
    try:
        expr = sp.sympify(expr)
    except (sp.SympifyError, TypeError):
        raise ParameterError(f"observable {what!r} is not an expression.") from None
    if not isinstance(expr, sp.Expr):
        raise ParameterError(f"observable {what!r} is not a number-valued expression.")
    if expr.has(sp.zoo, sp.oo, -sp.oo, sp.nan) or expr.has(sp.I):
        raise ParameterError(f"observable {what!r} is not a finite real number.")
    extra = expr.free_symbols - set(model.states) - set(model.params)
    if extra:
        raise ParameterError(
            f"observable {what!r} uses {', '.join(sorted(map(str, extra)))}, which is not a "
            f"symbol of model {model.name}."
        )
    return expr


def observable(model: Model, g: Any) -> Observable:
    """Parse ``g`` (a declared name, an expression, a string, ``"quadratic"``,
    ``("quadratic", M)`` or an :class:`Observable`) against ``model``."""
    if isinstance(g, Observable):
        return g
    if isinstance(g, tuple) and len(g) == 2 and g[0] == QUADRATIC:
        return Observable(QUADRATIC, None, g[1])
    if isinstance(g, str):
        text = g.strip()
        if text == QUADRATIC:
            return Observable(QUADRATIC, None, None)
        known = declared(model)
        if text in known:
            return Observable(text, known[text])
        expr = parse_expression(model, text)
        return Observable(text, expr)
    expr = check_expression(model, g)
    return Observable(str(expr), expr)


def derivatives(
    model: Model, expr: sp.Expr, order: int = 4
) -> list[dict[tuple[int, ...], sp.Expr]]:
    """``[ {(): g}, {(i,): dg/ds_i}, {(i<=j): d2g/ds_i ds_j}, ... ]`` up to ``order``.

    Each entry is one representative of its symmetric index class (indices
    sorted); zero entries are omitted.
    """
    states = model.states
    out: list[dict[tuple[int, ...], sp.Expr]] = [{(): sp.sympify(expr)}]
    for _ in range(order):
        nxt: dict[tuple[int, ...], sp.Expr] = {}
        for idx, e in out[-1].items():
            last = idx[-1] if idx else 0
            present = e.free_symbols
            for j in range(last, len(states)):
                if states[j] in present:
                    d = sp.diff(e, states[j])
                    if d != 0:
                        nxt[(*idx, j)] = d
        out.append(nxt)
    return out


def evaluate(model: Model, expr: sp.Expr, params: Mapping[str, Any], module: str = "numpy") -> Any:
    """``expr`` as a function of the state, the parameters bound to ``params``
    (name -> number of the back end's type): ``f(s1, .., sb)`` for
    ``module="mpmath"``, ``f(X)`` on an ``(n, b)`` float64 array for ``"numpy"``."""
    used = [p for p in model.params if p in expr.free_symbols]
    missing = [str(p) for p in used if str(p) not in params]
    if missing:
        raise ParameterError(f"observable {expr} needs a value of parameter {', '.join(missing)}.")
    fn = sp.lambdify((*model.states, *used), expr, module)
    bound = [params[str(p)] for p in used]
    if module != "numpy":
        return lambda *s: fn(*s, *bound)

    def on_array(X: Any) -> Any:
        import numpy as np

        X = np.asarray(X, dtype=float)
        val = fn(*[X[:, k] for k in range(X.shape[1])], *[float(v) for v in bound])
        return np.broadcast_to(np.asarray(val, dtype=float), (X.shape[0],))

    return on_array
