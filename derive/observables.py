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
(:mod:`numeric.meanfield.observables`; Gast, Bortolussi and Tribastone, "Size expansions
of mean field approximation: transient and steady-state analysis").
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sympy as sp

from mfstein.ground.errors import ParameterError

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

    #: The declared name, or the expression as text.
    name: str
    #: A SymPy expression in ``model.states`` and ``model.params``; ``None`` for the quadratic
    #: observable.
    expr: sp.Expr | None
    #: The matrix ``M`` of the quadratic observable ``N E[(S - s*)^T M (S - s*)]``; ``None``
    #: otherwise.
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


#: Most operators one term of an observable string may hold (a sum may hold any
#: number of terms): Python's parser recurses once per operator of a chain.
MAX_TERM_OPERATORS = 1000


def split_terms(text: str) -> list[str]:
    """``text`` cut at its top-level binary ``+`` and ``-`` (each piece keeps its
    sign): the summands of a long sum, each parsed on its own so that the length
    of a sum is not limited by the parser's recursion.  Raises
    :class:`mfstein.ground.errors.ParameterError` (one sentence, the limit named) for a
    term of more than :data:`MAX_TERM_OPERATORS` operators."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text.strip()).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return [text]  # check_syntax names the syntax error
    line = text.strip()
    offsets = [0]  # where each line of the text starts
    for row in line.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(row))
    pieces: list[str] = []
    start, depth, ops, prev = 0, 0, 0, None
    for tok in tokens:
        if tok.type == tokenize.OP:
            ops += 1
            depth += tok.string in "([{"
            depth -= tok.string in ")]}"
            binary = prev is not None and (
                prev.type in (tokenize.NAME, tokenize.NUMBER) or prev.string in ")]}"
            )
            if tok.string in "+-" and depth == 0 and binary:
                at = offsets[tok.start[0] - 1] + tok.start[1]
                pieces.append(line[start:at])
                start, ops = at, 0
            if ops > MAX_TERM_OPERATORS:
                raise ParameterError(
                    f"observable has a term of more than {MAX_TERM_OPERATORS} operators; "
                    "write it as a sum of smaller terms (a sum may have any number of terms)."
                )
        if tok.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER):
            prev = tok
    pieces.append(line[start:])
    return pieces


def parse_expression(model: Model, text: str) -> sp.Expr:
    """The string ``text`` as a SymPy expression in the model's symbols only.

    Decimal numbers are read as the exact rationals they denote (``0.2`` is
    ``1/5``, not the nearest binary float), so the value of ``g`` holds to every
    digit printed.  Raises :class:`mfstein.ground.errors.ParameterError` (one sentence)
    on a syntax error, a symbol the model does not have, a term too long to
    parse, or an expression that is not a finite real number wherever it is
    defined (``1/0``, ``nan``).
    """
    if not isinstance(text, str) or not text.strip():
        raise ParameterError(f"observable must be a non-empty expression, got {text!r}.")
    pieces = split_terms(text)
    terms = [_parse_term(model, text, piece) for piece in pieces]
    expr = terms[0] if len(terms) == 1 else sp.Add(*terms)
    return check_expression(model, expr, text)


def _parse_term(model: Model, text: str, piece: str) -> sp.Expr:
    """One summand ``piece`` of the observable ``text`` (a whole sum when it is short)."""
    from sympy.parsing.sympy_parser import (
        convert_xor,
        parse_expr,
        rationalize,
        standard_transformations,
    )

    try:
        check_syntax(piece)
    except ParameterError as exc:  # the sentence names the whole observable
        raise ParameterError(str(exc).replace(repr(piece), repr(text), 1)) from None
    symbols = {str(s): s for s in (*model.states, *model.params)}
    names = {
        node.id
        for node in ast.walk(ast.parse(piece.strip(), mode="eval"))
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
    rename, local = _symbol_placeholders(symbols)
    try:
        return parse_expr(
            piece.strip(),
            local_dict=local,
            global_dict=glob,
            transformations=(rename, *standard_transformations, convert_xor, rationalize),
            evaluate=True,
        )
    except (SyntaxError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise ParameterError(
            f"observable {text!r} is not a valid expression ({type(exc).__name__})."
        ) from None


def _symbol_placeholders(symbols: dict[str, sp.Symbol]) -> tuple[Any, dict[str, sp.Symbol]]:
    """A token transformation for :func:`~sympy.parsing.sympy_parser.parse_expr` that
    reads every name of ``symbols`` as the model's own symbol, and the names it binds.

    Each such name becomes a positional placeholder before SymPy's transformations
    see it, so that a model's ``E``, ``I``, ``pi``, ``S`` or ``Integer`` is the model's
    symbol, never Euler's number, the imaginary unit or a parser helper; a name of
    :data:`FUNCTIONS` stays the function only where it is called (``exp(-x)`` with a
    parameter named ``exp``).
    """
    from tokenize import NAME, OP

    holder = {name: f"_mfstein_symbol_{k}" for k, name in enumerate(symbols)}
    local = {holder[name]: sym for name, sym in symbols.items()}

    def rename(tokens: list, local_dict: dict, global_dict: dict) -> list:
        out = []
        for k, (kind, text) in enumerate(tokens):
            called = k + 1 < len(tokens) and tokens[k + 1] == (OP, "(")
            if kind == NAME and text in holder and not (called and text in FUNCTIONS):
                text = holder[text]
            out.append((kind, text))
        return out

    return rename, local


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
    from derive.evaluation import unsupported

    bad = unsupported(expr)
    if bad:
        raise ParameterError(
            f"observable {what!r} uses {', '.join(bad)}; an observable may only use "
            f"+ - * / ** and the functions {', '.join(sorted(FUNCTIONS))}."
        )
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
    # real stand-ins: d|x|/dx is sign(x), not an expression in re(x) and im(x)
    real = [sp.Dummy(str(x), real=True) for x in model.states]
    states = real
    out: list[dict[tuple[int, ...], sp.Expr]] = [
        {(): sp.sympify(expr).xreplace(dict(zip(model.states, real, strict=True)))}
    ]
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
    back = dict(zip(real, model.states, strict=True))
    return [{idx: e.xreplace(back) for idx, e in t.items()} for t in out]


def evaluate(
    model: Model, expr: sp.Expr, params: Mapping[str, Any], module: str = "numpy"
) -> Any:
    """``expr`` as a function ``f(X)`` of an ``(n, b)`` array of states, the
    parameters bound to ``params`` (name -> number or decimal string), evaluated
    element-wise in ``float64`` (``module="numpy"``) or in NumPy's ``longdouble``
    (``"longdouble"``, the second precision that bounds the first one's rounding
    error); one value per state.  ``f(counts, N)`` takes integer counts and
    divides the columns ``g`` uses by ``N`` in that precision.  The tree is walked, not compiled
    (:mod:`derive.evaluation`): any length of sum, every function of
    :data:`derive.evaluation.SUPPORTED`."""
    from derive.evaluation import compile_plan

    return evaluate_plan(model, compile_plan([expr]), params, module, expr)


def evaluate_plan(
    model: Model, plan: Any, params: Mapping[str, Any], module: str = "numpy", what: Any = None
) -> Any:
    """:func:`evaluate` of the one expression ``what`` compiled as ``plan``
    (:func:`derive.evaluation.compile_plan`, made once per observable): no SymPy."""
    every = evaluate_all(model, plan, params, module, what)
    return lambda X, divisor=None: every(X, divisor)[0]


def evaluate_all(
    model: Model, plan: Any, params: Mapping[str, Any], module: str = "numpy", what: Any = None
) -> Any:
    """:func:`evaluate_plan` of every expression of ``plan``: ``f(X)`` is the list of
    their values (one array each, one value per state); no SymPy."""
    import numpy as np

    from derive.evaluation import numpy_arithmetic, run

    dtype = {"numpy": np.float64, "longdouble": np.longdouble}[module]
    used = [p.name for p in model.params if p.name in plan.symbols]
    missing = [name for name in used if name not in params]
    if missing:
        raise ParameterError(f"observable {what} needs a value of parameter {', '.join(missing)}.")
    arith = numpy_arithmetic(dtype)
    bound = {name: arith.number(_exact(params[name])) for name in used}

    present = [(k, x.name) for k, x in enumerate(model.states) if x.name in plan.symbols]

    def on_array(X: Any, divisor: int | None = None) -> Any:
        X = np.asarray(X)
        leaves = dict(bound)
        for k, x in present:  # only the columns g uses, each divided in dtype
            col = np.asarray(X[:, k], dtype=dtype)
            leaves[x] = col if divisor is None else col / dtype(divisor)
        with np.errstate(all="ignore"):
            vals = run(plan, leaves, arith)
        return [np.broadcast_to(np.asarray(v, dtype=dtype), (X.shape[0],)) for v in vals]

    return on_array


def _exact(value: Any) -> Any:
    """A parameter value as the exact rational its text denotes (a
    :class:`fractions.Fraction`, read without SymPy when it can be)."""
    from fractions import Fraction

    try:
        return Fraction(str(value))
    except (ValueError, ZeroDivisionError):
        return sp.Rational(str(value))
