"""``mfstein solve``: fixed point, refined bias V, covariance W and the constant c
of any model (built-in, or a factory in a file), at any precision."""

from __future__ import annotations

import argparse
import sys

from mfstein.cli.constant_options import add_constant_options, add_float64_option, add_order_option
from mfstein.cli.model_args import add_task_model_options


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``mfstein solve`` to the dispatcher."""
    p = subparsers.add_parser(
        "solve",
        help="s*, V, W and c = tr(P Q) of any model (--model NAME|FILE.py:FACTORY)",
        description=(
            "Solve a model's mean field at any precision: the stable fixed point s*, the "
            "refined bias V (E[S] = s* + V/N + O(1/N^2)), the covariance W of the "
            "Ornstein-Uhlenbeck limit (J W + W J^T + Q = 0) and the constant c = tr(P Q) = "
            "tr(M W) with E[(S - s*)^T M (S - s*)] ~ c/N.  Conservation laws are detected "
            "and removed; results are in the model's own coordinates.  'digits' is the "
            "number of significant digits on which independent routes agree."
        ),
        epilog=(
            "examples: mfstein solve --model sir --param beta=3 --param gamma=1 "
            "--param rho=0.5 --param a=0.1;  mfstein solve --model supermarket "
            "--param b=10 --param lam=0.9 --dps 50;  mfstein solve --model mymodel.py:build "
            "--param lam=0.5"
        ),
    )
    add_task_model_options(
        p,
        required=True,
        start_help="initial state (model coordinates): starts the search, fixes conserved sums",
    )
    add_constant_options(p, certify=True)
    p.add_argument(
        "--route",
        "--method",
        dest="route",
        default="auto",
        choices=("auto", "general", "fast"),
        help="the mean-field route: auto, the model's registered fast path when it has one "
        "(default); general; fast (--method is the old name)",
    )
    add_order_option(p, "2: also the 1/N^2 terms A, B and c2 (N E||S-s*||^2 = c + c2/N + ...)")
    add_float64_option(
        p,
        "the float64 route for any model (sparse, no compiling; digits estimated "
        "from the conditioning and two routes; --dps is then ignored)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``mfstein solve``."""
    import mpmath

    from mfstein.cli.constant_options import precision_of
    from mfstein.cli.model_args import model_from_args, observables_from_args
    from mfstein.ground.progress import on_terminal, with_stages
    from numeric.meanfield.entry import solve
    from numeric.precision import check_dps

    dps = check_dps(args.dps)
    model, params = model_from_args(args)
    from mfstein.cli import heterogeneous

    if heterogeneous.is_heterogeneous(model):
        return heterogeneous.solve(args, model, params, dps, observables_from_args(args))
    sol = with_stages(solve, "mfstein solve", show=on_terminal(args))(
        model,
        params,
        dps=dps,
        M=args.M,
        start=args.start,
        route=args.route,
        order=int(args.order),
        precision=precision_of(args),
        observables=observables_from_args(args),
    )
    states = _state_names(model, sol.n)
    cert = None
    if getattr(args, "certify", False):
        from mfstein.ground.errors import NumericalError

        try:
            cert = sol.certify(params=params, M=args.M, start=args.start)
        except NumericalError as exc:
            print(f"mfstein solve: certification refused: {exc}", file=sys.stderr)
            return 1
    with mpmath.workdps(dps + 20):
        # every entry keeps only the digits its own error allows (numeric.precision)
        if args.json:
            from mfstein.ground.streams import write_json

            write_json(sol if cert is None else cert)  # a certificate holds its solution
            return 0
        print(sol.to_text(states, dps=dps, cert=cert))
    return 0


def _state_names(model, b: int) -> list[str]:
    states = getattr(model, "states", None)
    if states is not None and len(states) == b:
        return [str(s) for s in states]
    return [f"s{k}" for k in range(1, b + 1)]
