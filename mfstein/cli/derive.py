"""``mfstein derive``: print a model's symbolic objects as LaTeX, text or JSON.

JSON strings parse back with plain :func:`sympy.sympify` to the identical
expression: symbols whose names SymPy's parser would read as something else
(``N`` is SymPy's numeric-evaluation function) are printed as ``Symbol('N')``.
"""

from __future__ import annotations

import argparse
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
#: ``--format`` choices: Python is source that rebuilds the objects in SymPy.
FORMATS = ("text", "latex", "python", "json")


#: Short names ``--show`` also accepts, and the object each stands for.
SHOW_ALIASES = {"H": "hessian"}
#: Objects of the supermarket model only (``--b``, without ``--model``).
SUPERMARKET_ONLY = ("closed-form",)
#: The options of the supermarket's short form (``--b``), unused with ``--model``.
SUPERMARKET_OPTIONS = ("b", "d", "mu", "without_replacement")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``mfstein derive`` to the dispatcher."""
    from mfstein.cli.model_args import add_model_options

    p = subparsers.add_parser(
        "derive",
        help="symbolic objects of any model (f, J, Hessian, Q, Stein, Lyapunov, ...)",
        description=(
            "Derive the drift, Jacobian, Hessian, diffusion, f~, Stein's equation, the "
            "Lyapunov system (plain and vectorised) and the generator identity of Lemma 7 "
            "of any model (--model NAME|FILE.py:FACTORY; --param NAME=VALUE puts numbers "
            "in), or of the power-of-d supermarket model by --b (with its b <= 2 closed "
            "forms), and print them as text, LaTeX, Python or JSON."
        ),
        epilog=(
            "examples: mfstein derive --b 2 --show J --format latex;  mfstein derive "
            "--model sis --param beta=2 --show f --show J --format latex;  mfstein derive "
            "--model mymodel.py:build --show stein --json"
        ),
    )
    p.add_argument(
        "--b", metavar="B", help="supermarket buffer size, an integer >= 1 (without --model)"
    )
    p.add_argument("--d", metavar="D", help="choices per arrival, integer >= 1 (default 2)")
    p.add_argument(
        "--mu",
        help="service rate: a positive number, or 'mu' to keep it symbolic (default 1)",
    )
    p.add_argument(
        "--without-replacement",
        action="store_true",
        help="sample d distinct servers (rates then depend on N)",
    )
    g = p.add_argument_group("any model (give --model instead of --b)")
    add_model_options(
        g,
        param_help="a factory option (e.g. b=3) or a parameter value put into every "
        "object (e.g. lam=0.9; the others stay symbols); repeatable",
    )
    p.add_argument(
        "--show",
        action="append",
        metavar="NAMES",
        help=f"comma-separated objects from {','.join(SHOW_NAMES)} (H for hessian); "
        f"repeatable (default {DEFAULT_SHOW})",
    )
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument(
        "--json",
        action="store_true",
        help="print JSON (the same as --format json: SymPy expressions as strings that "
        "sympy.sympify parses back)",
    )
    p.set_defaults(handler=run)


def parse_show(text: str | list[str] | None) -> list[str]:
    """Validate ``--show`` (one comma-separated text, or the texts of a repeated
    ``--show``; ``None`` is the default list); unknown names raise ParameterError."""
    from mfstein.ground.errors import ParameterError

    texts = [DEFAULT_SHOW] if text is None else [text] if isinstance(text, str) else list(text)
    names: list[str] = []
    for item in texts:
        parts = [SHOW_ALIASES.get(t.strip(), t.strip()) for t in item.split(",")]
        bad = [n for n in parts if n not in SHOW_NAMES]
        if "" in parts:  # an empty item (f,,J or a trailing comma), as in every list option
            bad, parts = [], []
        if not parts or bad:
            raise ParameterError(
                f"--show must be a comma-separated list of {', '.join(SHOW_NAMES)} (H for "
                f"hessian), got {', '.join(bad) if bad else repr(item)}."
            )
        names += parts
    return list(dict.fromkeys(names))


def _parse_mu(text: str) -> object:
    """``--mu``: ``mu`` (symbolic) or a rate ``0 < mu <= MAX_LAM`` read by the one
    number parser (:func:`mfstein.ground.numbers.parse_real`), as an exact SymPy rational."""
    import sympy as sp

    from mfstein.ground.limits import MAX_LAM
    from mfstein.ground.numbers import parse_real

    if text.strip() == "mu":
        return "mu"
    value = parse_real("--mu", text, 0, MAX_LAM, low_open=True)
    return sp.Rational(value.numerator, value.denominator)


def objects(model: Any, names: list[str]) -> dict[str, Any]:
    """The SymPy objects behind each ``--show`` name (dicts for composite ones):
    :func:`derive.models.derived_objects.derive_objects`'s ``objects``."""
    from derive.models.derived_objects import derive_objects

    return derive_objects(model, names).objects


def run(args: argparse.Namespace) -> int:
    """Handler of ``mfstein derive``."""
    from mfstein.ground.errors import ParameterError

    if getattr(args, "json", False):
        if args.format not in ("text", "json"):
            raise ParameterError(f"--json and --format {args.format} exclude each other.")
        args.format = "json"
    names = parse_show(args.show)
    model = _given_model(args, names) if args.model is not None else _supermarket(args, names)
    return _print_objects(model, names, args.format)


def _check_size(b: int, names: list[str], what: str) -> None:
    """Refuse a dimension ``b`` beyond what symbolic derivation finishes (the limits
    of :mod:`mfstein.ground.limits`), for the whole run or for one of the ``--show`` objects."""
    from mfstein.ground.errors import ParameterError
    from mfstein.ground.limits import DERIVE_MAX_B, DERIVE_OBJECT_MAX_B

    if b > DERIVE_MAX_B:
        raise ParameterError(
            f"{what} must be at most {DERIVE_MAX_B} for symbolic derivation, got {b}: the "
            f"expressions grow like b^2 (b = 80 takes ~10 s, b = 300 over a minute); "
            "for numbers at large b use 'mfstein solve' or 'mfstein bound'."
        )
    for name in names:
        cap = DERIVE_OBJECT_MAX_B.get(name)
        if cap is not None and b > cap and name != "closed-form":
            raise ParameterError(
                f"--show {name} needs {what} <= {cap} (got {b}): its size grows like "
                f"{'b^4 (a b^2 x b^2 matrix)' if name == 'kron' else 'b^3 or faster'}."
            )


def _supermarket(args: argparse.Namespace, names: list[str]) -> Any:
    """The supermarket model of the short form ``--b [--d --mu --without-replacement]``."""
    from derive.models.supermarket import supermarket
    from mfstein.cli.option_scope import refuse_unused
    from mfstein.ground.errors import ParameterError, check_int
    from mfstein.ground.limits import MAX_D

    refuse_unused(args, ("param",), "with --model", "give --model supermarket, or drop it")
    if args.b is None:
        raise ParameterError(
            "b is required without --model (--b, an integer >= 1; or --model NAME|FILE.py:FACTORY)."
        )
    b = check_int("--b", args.b, 1)
    d = check_int("--d", "2" if args.d is None else args.d, 1, MAX_D)
    _check_size(b, names, "--b")
    mu = _parse_mu("1" if args.mu is None else args.mu)
    if "closed-form" in names and not (
        b <= 2 and d == 2 and mu == 1 and not args.without_replacement
    ):
        raise ParameterError(
            "closed-form needs --b 1 or 2 with --d 2, --mu 1 and sampling with replacement "
            f"(got b = {b}, d = {d}); from b = 3 on s*_b solves a degree-2^b polynomial "
            "with no solution in radicals."
        )
    return supermarket(b, d, mu=mu, replacement=not args.without_replacement)


def _given_model(args: argparse.Namespace, names: list[str]) -> Any:
    """The model of ``--model``/``--param`` with the parameter values put in."""
    from derive.spec import Truncated
    from derive.substitution import with_values
    from mfstein.cli.model_args import model_from_args
    from mfstein.cli.option_scope import refuse_unused
    from mfstein.ground.errors import ParameterError

    hint = f"model {args.model} takes its options and parameters as --param NAME=VALUE"
    refuse_unused(args, SUPERMARKET_OPTIONS, "by the supermarket's short form (--b)", hint)
    only = [n for n in names if n in SUPERMARKET_ONLY]
    if only:
        raise ParameterError(
            f"--show {only[0]} is the supermarket's closed form: give --b 1 or 2 instead of "
            "--model."
        )
    model, params = model_from_args(args)
    if isinstance(model, Truncated):
        raise ParameterError(
            f"model {args.model} has an unbounded state here; give a finite size for "
            "symbolic derivation (e.g. --param b=5)."
        )
    _check_size(model.n, names, f"the dimension of model {model.name}")
    return with_values(model, params)


def _print_objects(model: Any, names: list[str], fmt: str) -> int:
    """Print the ``--show`` objects of ``model`` in ``fmt``, as the result
    (:class:`derive.models.derived_objects.DerivedObjects`) writes them; the exit status."""
    from derive.models.derived_objects import derive_objects
    from mfstein.ground.streams import show

    derived = derive_objects(model, names)
    if fmt in ("latex", "python"):
        print(derived.to_latex() if fmt == "latex" else derived.to_python())
        return 0
    return show(derived, fmt == "json")
