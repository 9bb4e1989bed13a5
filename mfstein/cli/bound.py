"""``mfstein bound`` and ``mfstein refined``: Theorem 1's constant and the refined mean field.

``bound`` prints ``c`` and the bound ``c/N`` on ``E||S - s*||^2`` (core paper,
Theorem 1, sign corrected) for one or more system sizes; ``refined`` prints
``s*``, the refined bias ``V`` (``E[S] ~ s* + V/N``) and the covariance ``W``.
Heavy imports happen inside the handlers.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mfstein.cli.constant_options import add_order_option
from mfstein.ground.errors import ParameterError
from mfstein.ground.streams import show


def _common(p: argparse.ArgumentParser, *, certify: bool) -> None:
    from mfstein.cli.constant_options import add_constant_options
    from mfstein.cli.supermarket_grid import add_supermarket_grid

    add_supermarket_grid(p, b_inf=True)
    add_constant_options(p, certify=certify)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``mfstein bound`` and ``mfstein refined`` to the dispatcher."""
    p = subparsers.add_parser(
        "bound",
        help="Theorem 1's constant c and the bound c/N at any precision",
        description=(
            "Compute the constant c with E||S - s*||^2 ~ c/N (Theorem 1 of the core paper, sign "
            "corrected) for the power-of-d supermarket model, by independent routes that "
            "must agree, and print c, c/N and the number of correct digits. "
            "s*, V and W are printed by 'mfstein refined'."
        ),
    )
    _common(p, certify=True)
    p.set_defaults(handler=run_bound)
    r = subparsers.add_parser(
        "refined",
        help="fixed point s*, refined bias V (E[S] ~ s* + V/N) and covariance W",
        description=(
            "Print the mean-field fixed point s*, the refined mean-field bias V "
            "(E[S] = s* + V/N + O(1/N^2)) and the Ornstein-Uhlenbeck covariance W "
            "(J W + W J^T + Q = 0); --json gives W in full."
        ),
    )
    _common(r, certify=False)
    add_order_option(r, "2: also the 1/N^2 terms A, B and c2 of the size expansion")
    r.set_defaults(handler=run_refined)


def _parse_ns(text: str) -> list[int]:
    """The N list in the order given, each N once (as ``mfstein lemmas`` does)."""
    from numeric.precision import parse_size

    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if not items:
        raise ParameterError("N must be a comma-separated list of integers >= 1.")
    return list(dict.fromkeys(parse_size("N", t) for t in items))


def _solutions(args: argparse.Namespace) -> list[tuple[int, Any]]:
    """(N, MeanFieldSolution) for each requested N, computing each lam once."""
    from mfstein.families.supermarket.equilibrium import check_b
    from mfstein.families.supermarket.short_form import bound
    from mfstein.ground.errors import check_int
    from mfstein.ground.limits import MAX_D
    from numeric.precision import arrival_rate, check_dps

    dps = check_dps(args.dps)
    d = check_int("d", args.d, 1, MAX_D)
    b = check_b(args.b, allow=("auto", "inf"))
    ns = _parse_ns(args.N)
    if args.lam is not None:
        arrival_rate(args.lam, args.gamma, args.alpha, None)  # validates the choice
        lams = [args.lam] * len(ns)  # kept as given: parsed at each working precision
    else:
        lams = [arrival_rate(None, args.gamma, args.alpha, n, dps=dps + 20) for n in ns]
        if b in ("auto", "inf"):
            from numeric.precision import check_heavy_traffic_below_one

            check_heavy_traffic_below_one(args.gamma, args.alpha, ns, dps, b=b)
    done: dict[str, Any] = {}
    out = []
    for n, lam in zip(ns, lams, strict=True):
        key = str(lam)
        if key not in done:
            done[key] = bound(lam, b, d, dps=dps, M=args.M)
        out.append((n, done[key]))
    return out


def run_bound(args: argparse.Namespace) -> int:
    """Handler of ``mfstein bound``: prints a
    :class:`mfstein.families.supermarket.size_tables.BoundTable`."""
    from mfstein.families.supermarket.size_tables import BoundTable

    sols = _solutions(args)
    certs = None
    if getattr(args, "certify", False):
        from mfstein.ground.errors import NumericalError
        from numeric.certified.enclosures import heavy_traffic_ball

        certs = []
        for n, s in sols:
            exact = heavy_traffic_ball(args.gamma, args.alpha, n) if args.lam is None else None
            lam = args.lam if args.lam is not None else exact
            try:
                certs.append(s.certify(params={"lam": lam}, M=args.M))
            except NumericalError as exc:
                print(f"mfstein bound: certification refused (N = {n}): {exc}", file=sys.stderr)
                return 1
    ns, solutions = zip(*sols, strict=True)
    table = BoundTable(ns, solutions, None if certs is None else tuple(certs))
    return _show(args, table)


def _show(args: argparse.Namespace, table: Any) -> int:
    """Print ``table`` as one line of JSON (``--json``) or as its text."""
    return show(table, args.json)


def run_refined(args: argparse.Namespace) -> int:
    """Handler of ``mfstein refined``: prints a
    :class:`mfstein.families.supermarket.size_tables.RefinedTable`."""
    from mfstein.families.supermarket.size_tables import RefinedTable

    sols = _solutions(args)
    if getattr(args, "order", "1") == "2":
        from mfstein.ground.limits import check_time, second_order_seconds
        from numeric.meanfield.truncation import add_second_order

        for _, s in sols:
            check_time(
                f"the 1/N^2 terms at b = {s.n} and {s.dps} digits",
                second_order_seconds(s.n, s.dps),
                "lower b or dps (or use --order 1).",
            )

        seen: dict[int, Any] = {}
        for _, s in sols:
            if id(s) not in seen:
                # the model and rates the solution was computed from, not rebuilt from s.lam
                model, params = s.get_model(), dict(s.inputs)
                seen[id(s)] = add_second_order(s, model, params, dps=s.dps, M=args.M, start=None)
        sols = [(n, seen[id(s)]) for n, s in sols]
    ns, solutions = zip(*sols, strict=True)
    return _show(args, RefinedTable(ns, solutions))
