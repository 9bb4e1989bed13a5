"""``mfstein lemmas``: check the registered claims of the core paper over a grid of N.

Registered by ``mfstein.cli``; heavy imports happen inside the handler.
"""

from __future__ import annotations

import argparse

from mfstein.cli.option_types import integer, real
from mfstein.cli.supermarket_grid import add_supermarket_grid
from mfstein.ground.limits import MAX_DPS, MIN_DPS


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``lemmas`` subcommand to the ``mfstein`` dispatcher."""
    p = subparsers.add_parser(
        "lemmas",
        help="check the paper's numeric claims (lemma constants) over a grid of N",
        description=(
            "Evaluate each registered claim of the core paper -- left side, right side, margin "
            "(>= 0 when it holds) -- at every N of the grid, in mpmath at the working "
            "precision, and report from which grid N on it holds.  Claims the paper gets "
            "wrong are reported as failing, with the corrected statement.  Exit status 0 "
            "whatever the verdicts; 2 for bad input."
        ),
    )
    add_supermarket_grid(p, N_unless="--list")
    p.add_argument(
        "--xi",
        type=real("xi", 0, 1, low_open=True, high_open=True),
        default="0.00001",
        help="the paper's small xi, 0 < xi < 1 (default 0.00001)",
    )
    p.add_argument(
        "--dps",
        type=integer("dps", MIN_DPS, MAX_DPS),
        default=30,
        help="working precision in decimal digits (default 30)",
    )
    p.add_argument(
        "--only", help="comma-separated claim ids or families, e.g. lemma5,lemma9.f1,theorem1"
    )
    p.add_argument("--list", action="store_true", help="list the registered claims and exit")
    p.add_argument(
        "--json", action="store_true", help="print JSON (decimal strings) instead of tables"
    )
    p.add_argument(
        "--certify",
        action="store_true",
        help="decide each claim in Arb ball arithmetic: 'proved at N' only when the margin "
        "ball excludes the failing side, else 'not decided at this precision'",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``mfstein lemmas``; returns the exit status."""
    import sys

    from mfstein.ground.errors import ParameterError
    from mfstein.ground.streams import show
    from numeric.lemmas import check, registered_claims

    if args.list:
        from mfstein.cli.option_scope import refuse_unused

        checking = ("N", "lam", "gamma", "alpha", "xi", "b", "d", "dps", "only", "certify")
        refuse_unused(args, checking, "to check claims (without --list)")
        claims = registered_claims()
        return show(claims, args.json)
    if args.N is None:
        raise ParameterError("--N is required: a comma-separated grid of sizes, e.g. 10,100.")
    ids = None
    if args.only is not None:
        ids = [s.strip() for s in args.only.split(",")]
        if not ids or "" in ids:  # an empty item, as in every list option
            raise ParameterError(
                f"--only must name claim ids (see --list) with no empty item, got {args.only!r}."
            )
    if getattr(args, "certify", False):
        from numeric.lemmas.certified_claims import check_certified

        return show(check_certified(ids, **_grid(args)), args.json)
    return show(check(ids, **_grid(args), progress=sys.stderr.isatty()), args.json)


def _grid(args: argparse.Namespace) -> dict[str, str]:
    """The grid of points the claims are checked on, as keywords of
    :func:`numeric.lemmas.check` and :func:`numeric.lemmas.certified_claims.check_certified`:
    the sizes ``N``, the rate (``lam``, or ``gamma`` and ``alpha``), ``xi``, ``b``,
    ``d`` and the working precision ``dps``, as given on the command line."""
    names = ("N", "gamma", "alpha", "lam", "xi", "b", "d", "dps")
    return {name: getattr(args, name) for name in names}
