"""``mfstein sweep``: the mean field of one model over a grid of parameter values
(:func:`numeric.meanfield.sweep.sweep`), as a table, JSON, CSV or a plot."""

from __future__ import annotations

import argparse

from mfstein.cli.constant_options import add_float64_option, add_order_option, precision_of
from mfstein.cli.model_args import add_model_options
from mfstein.cli.progress_options import add_progress_option, add_scheduler_option


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``mfstein sweep`` to the dispatcher."""
    from mfstein.cli.option_types import integer
    from mfstein.ground.limits import MAX_DPS, MIN_DPS, SIM_MAX_WORKERS

    p = subparsers.add_parser(
        "sweep",
        help="s*, V, c (c2) of any model over a grid of parameter values",
        description=(
            "Solve a model's mean field at every point of a parameter grid: the model is "
            "prepared once and each fixed point is continued from its neighbour.  Sweep a "
            "parameter with --param NAME=START:STOP:COUNT (COUNT equally spaced values, "
            "read exactly); several swept parameters give their product.  A point that "
            "has no answer (an unstable fixed point, a parameter out of range) is "
            "reported in one sentence and the sweep goes on."
        ),
        epilog=(
            "examples: mfstein sweep --model supermarket --param b=10 --param "
            "lam=0.5:0.99:50 --float64;  mfstein sweep --model sir --param beta=2:4:5 "
            "--param gamma=1 --param rho=0.5 --param a=0.1 --order 2 --csv sir.csv"
        ),
    )
    add_model_options(
        p,
        required=True,
        param_help="a factory option (e.g. b=10), a model parameter (e.g. lam=0.9) or a "
        "swept one (lam=0.5:0.99:50); repeatable",
    )
    p.add_argument(
        "--start",
        default=None,
        metavar="X1,X2,...",
        help="initial state in the model's coordinates, comma-separated, at every point "
        "(fixes the conserved quantities; default the model's own)",
    )
    add_order_option(p, "2: also c2 (N E||S-s*||^2 = c + c2/N + ...)")
    prec = p.add_mutually_exclusive_group()
    prec.add_argument(
        "--dps",
        type=integer("dps", MIN_DPS, MAX_DPS),
        default=None,
        help=f"significant digits at every point, integer >= {MIN_DPS} (default 30)",
    )
    add_float64_option(prec, "the float64 route at every point (digits estimated per point)")
    p.add_argument(
        "--observable",
        action="append",
        default=[],
        metavar="G",
        help="an observable's expansion at every point (a declared name, 'quadratic' or "
        "an expression); repeatable",
    )
    p.add_argument(
        "--M",
        default="identity",
        help="quadratic observable of c: 'identity' (default) or 'diag:a,b,...'",
    )
    p.add_argument("--csv", metavar="FILE", help="write every point as CSV to FILE")
    p.add_argument("--plot", metavar="FILE", help="draw c against the first swept parameter")
    p.add_argument("--json", action="store_true", help="print JSON (every point)")
    p.add_argument(
        "--workers",
        type=integer("workers", 1, SIM_MAX_WORKERS),
        default=1,
        help="local processes (default 1)",
    )
    add_scheduler_option(p)
    add_progress_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``mfstein sweep``."""
    from mfstein.cli.model_args import parse_pairs
    from mfstein.cli.output_files import check_output_file
    from mfstein.cli.transient import PLOT_SUFFIXES

    csv_path = None if args.csv is None else check_output_file("--csv", args.csv, (".csv",))
    plot_path = None if args.plot is None else check_output_file("--plot", args.plot, PLOT_SUFFIXES)
    pairs = parse_pairs(args.param)
    from numeric.meanfield.sweep import sweep

    result = sweep(
        args.model,
        pairs,
        order=int(args.order),
        dps=30 if args.dps is None else args.dps,
        precision=precision_of(args),
        observables=list(args.observable),
        M=args.M,
        start=args.start,
        workers=args.workers,
        scheduler=args.scheduler,
        progress=False if args.no_progress else None,
    )
    if csv_path is not None:
        result.to_csv(csv_path)
    if plot_path is not None:
        result.plot(plot_path)
    from mfstein.ground.streams import show

    return show(result, args.json)
