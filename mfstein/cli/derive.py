"""``mfstein derive``: print a model's symbolic objects as LaTeX, text or JSON.

JSON strings parse back with plain :func:`sympy.sympify` to the identical
expression: symbols whose names SymPy's parser would read as something else
(``N`` is SymPy's numeric-evaluation function) are printed as ``Symbol('N')``.
"""

from __future__ import annotations

import argparse
import functools
from typing import Any

#: Every object ``--show`` accepts, in output order.
SHOW_NAMES: tuple[str, ...] = (
    "f",
    "J",
    "hessian",
    "Q",
    "ftilde",
    "stein",
    "lyapunov",
    "kron",
    "generator",
    "closed-form",
)
DEFAULT_SHOW = "f,J,hessian,Q,ftilde"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``mfstein derive`` to the dispatcher."""
    p = subparsers.add_parser(
        "derive",
        help="symbolic objects of the supermarket model (f, J, Hessian, Q, Stein, Lyapunov, ...)",
        description=(
            "Derive the drift, Jacobian, Hessian, diffusion, f~, Stein's equation, the "
            "Lyapunov system (plain and vectorised), the generator identity of Lemma 7 and "
            "the b <= 2 closed forms of the power-of-d supermarket model, and print them."
        ),
    )
    p.add_argument("--b", required=True, metavar="B", help="buffer size, an integer >= 1")
    p.add_argument("--d", default="2", metavar="D", help="choices per arrival, integer >= 1")
    p.add_argument(
        "--mu",
        default="1",
        help="service rate: a positive number, or 'mu' to keep it symbolic (default 1)",
    )
    p.add_argument(
        "--without-replacement",
        action="store_true",
        help="sample d distinct servers (rates then depend on N)",
    )
    p.add_argument(
        "--show",
        default=DEFAULT_SHOW,
        help=f"comma-separated objects from {','.join(SHOW_NAMES)} (default {DEFAULT_SHOW})",
    )
    p.add_argument("--format", choices=("latex", "text", "json"), default="text")
    p.add_argument(
        "--json",
        action="store_true",
        help="print JSON (the same as --format json: SymPy expressions as strings that "
        "sympy.sympify parses back)",
    )
    p.set_defaults(handler=run)


def parse_show(text: str) -> list[str]:
    """Validate a ``--show`` list; unknown names raise ParameterError."""
    from mfstein.errors import ParameterError

    names = [t.strip() for t in text.split(",")]
    bad = [n for n in names if n not in SHOW_NAMES]
    if "" in names:  # an empty item (f,,J or a trailing comma), as in every list option
        bad = []
        names = []
    if not names or bad:
        raise ParameterError(
            f"--show must be a comma-separated list of {', '.join(SHOW_NAMES)}, "
            f"got {', '.join(bad) if bad else repr(text)}."
        )
    return list(dict.fromkeys(names))


def _parse_mu(text: str) -> object:
    """``--mu``: ``mu`` (symbolic) or a rate ``0 < mu <= MAX_LAM`` read by the one
    number parser (:func:`mfstein.numbers.parse_real`), as an exact SymPy rational."""
    import sympy as sp

    from mfstein.limits import MAX_LAM
    from mfstein.numbers import parse_real

    if text.strip() == "mu":
        return "mu"
    value = parse_real("--mu", text, 0, MAX_LAM, low_open=True)
    return sp.Rational(value.numerator, value.denominator)


@functools.cache
def _round_trip_printer():
    """A StrPrinter that writes ``Symbol('N')`` for names sympify would misread."""
    import sympy as sp
    from sympy.printing.str import StrPrinter

    @functools.cache
    def safe(name: str) -> bool:
        try:
            return sp.sympify(name) == sp.Symbol(name)
        except (sp.SympifyError, TypeError, SyntaxError, ValueError):
            return False

    class _RoundTrip(StrPrinter):
        def _print_Symbol(self, s: sp.Symbol) -> str:
            return s.name if safe(s.name) else f"Symbol({s.name!r})"

    return _RoundTrip()


def to_string(expr: Any) -> str:
    """A string that :func:`sympy.sympify` parses back to exactly ``expr``."""
    import sympy as sp

    if expr == 0:
        return "0"
    return _round_trip_printer().doprint(sp.sympify(expr))


def _nested(obj: Any) -> Any:
    import sympy as sp

    if isinstance(obj, sp.MatrixBase):
        if obj.shape[1] == 1:
            return [to_string(e) for e in obj]
        return [[to_string(e) for e in obj.row(i)] for i in range(obj.shape[0])]
    if isinstance(obj, sp.NDimArray):
        return _nested_array(obj.tolist())
    if isinstance(obj, dict):
        return {k: _nested(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_nested(v) for v in obj]
    return to_string(obj)


def _nested_array(x: Any) -> Any:
    return [_nested_array(v) for v in x] if isinstance(x, list) else to_string(x)


def objects(model, names: list[str]) -> dict[str, Any]:
    """The SymPy objects behind each ``--show`` name (dicts for composite ones)."""
    from derive import chain_operator, stein

    out: dict[str, Any] = {}
    for name in names:
        if name == "f":
            out[name] = model.drift
        elif name == "J":
            out[name] = model.jacobian
        elif name == "hessian":
            out[name] = model.hessian
        elif name == "Q":
            out[name] = model.diffusion
        elif name == "ftilde":
            out[name] = model.ftilde
        elif name == "stein":
            eq = stein.stein_equation(model)
            out[name] = {
                "equilibrium": [e.lhs for e in stein.equilibrium_equations(model)],
                "J_star": stein.jacobian_at_equilibrium(model),
                "linearised_drift": stein.linearised_drift(model),
                "g": stein.stein_solution(model),
                "P": stein.p_matrix(model.b),
                "stein_lhs": eq.lhs,
                "stein_rhs": eq.rhs,
                "dominant_term": stein.dominant_term(model),
            }
        elif name == "lyapunov":
            eq = stein.lyapunov_equation(model)
            out[name] = {
                "lhs": eq.lhs,
                "rhs": eq.rhs,
                "residual": stein.lyapunov_residual(model),
            }
        elif name == "kron":
            ks = stein.kronecker_system(model)
            out[name] = {"matrix": ks.matrix, "vecP": ks.unknowns, "rhs": ks.rhs}
        elif name == "generator":
            g = chain_operator.quadratic_test_function(model)
            out[name] = {
                "g": g,
                "Gg": chain_operator.generator_apply(model, g),
                "lemma7_rhs": chain_operator.lemma7_rhs(model, g),
                "difference": chain_operator.lemma7_difference(model, g),
            }
        elif name == "closed-form":
            from derive.closed_forms import closed_form

            cf = closed_form(model.b)
            out[name] = {
                "s_star": list(cf.s_star),
                "J": cf.J,
                "P": cf.P,
                "c": cf.c,
                "P_in_sstar": cf.P_in_sstar,
                "c_in_sstar": cf.c_in_sstar,
            }
    return out


#: Expressions longer than this (as plain strings) are printed flat, not 2-D.
PRETTY_LIMIT = 2000


def _text(obj: Any, indent: str = "  ") -> list[str]:
    import sympy as sp

    if isinstance(obj, dict):
        lines = []
        for k, v in obj.items():
            lines.append(f"{indent}{k}:")
            lines += _text(v, indent + "  ")
        return lines
    flat = str(obj)
    if len(flat) > PRETTY_LIMIT:  # 2-D layout of huge radicals is unreadable and slow
        return [indent + flat]
    return [indent + line for line in sp.pretty(obj, use_unicode=False).splitlines()]


def run(args: argparse.Namespace) -> int:
    """Handler of ``mfstein derive``."""
    from derive.models.supermarket import supermarket
    from mfstein.errors import ParameterError, check_int
    from mfstein.limits import DERIVE_MAX_B, DERIVE_OBJECT_MAX_B, MAX_D

    if getattr(args, "json", False):
        if args.format not in ("text", "json"):
            raise ParameterError(f"--json and --format {args.format} exclude each other.")
        args.format = "json"
    b = check_int("--b", args.b, 1)
    d = check_int("--d", args.d, 1, MAX_D)
    names = parse_show(args.show)
    if b > DERIVE_MAX_B:
        raise ParameterError(
            f"--b must be at most {DERIVE_MAX_B} for symbolic derivation, got {b}: the "
            f"expressions grow like b^2 (b = 80 takes ~10 s, b = 300 over a minute); "
            "for numbers at large b use 'mfstein bound' or 'mfstein refined'."
        )
    for name in names:
        cap = DERIVE_OBJECT_MAX_B.get(name)
        if cap is not None and b > cap and name != "closed-form":
            raise ParameterError(
                f"--show {name} needs --b <= {cap} (got b = {b}): its size grows like "
                f"{'b^4 (a b^2 x b^2 matrix)' if name == 'kron' else 'b^3 or faster'}."
            )
    mu = _parse_mu(args.mu)
    if "closed-form" in names and not (
        b <= 2 and d == 2 and mu == 1 and not args.without_replacement
    ):
        raise ParameterError(
            "closed-form needs --b 1 or 2 with --d 2, --mu 1 and sampling with replacement "
            f"(got b = {b}, d = {d}); from b = 3 on s*_b solves a degree-2^b polynomial "
            "with no solution in radicals."
        )
    model = supermarket(b, d, mu=mu, replacement=not args.without_replacement)
    if args.format == "latex":
        from derive.latex import latex_objects

        for name, text in latex_objects(model, names).items():
            print(f"% {name}")
            print(text)
        return 0
    objs = objects(model, names)
    if args.format == "json":
        from mfstein.streams import write_json

        write_json({k: _nested(v) for k, v in objs.items()})
        return 0
    for name, obj in objs.items():
        print(f"{name}:")
        print("\n".join(_text(obj)))
    return 0
