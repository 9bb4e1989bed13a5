"""``mfstein table --model NAME|FILE:FACTORY --observable G ...``: the accuracy
table of an observable for any model (:func:`sim.accuracy.accuracy`); with
``--observable`` repeated, the table of each, computed together.

The options are added to ``mfstein table`` (registered in
:mod:`mfstein.cli.simulate`); without ``--model`` that command prints the core
paper's Table 1 exactly as before.  Importing this module loads only the
standard library.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mfstein.cli.model_args import add_model_options, add_observable_option
from mfstein.cli.option_types import integer
from mfstein.cli.progress_options import progress_wanted
from mfstein.ground.errors import ParameterError
from mfstein.ground.streams import write_json

#: Default events per replication of each simulated N with ``--model``.
MODEL_TABLE_STEPS = 10**7


def add_table_model_arguments(t: argparse.ArgumentParser) -> None:
    """Add ``--model``, ``--param``, ``--observable`` (repeatable), ``--start``,
    ``--order`` and ``--simulate``."""
    g = t.add_argument_group("any model (give --model and --observable; --N as above)")
    add_model_options(
        g,
        param_help="a factory option (e.g. b=10) or a model parameter, which may be an "
        "expression in N (e.g. lam='1 - 0.1/N**0.05'); repeatable",
    )
    add_observable_option(g)
    g.add_argument(
        "--start",
        metavar="S1,S2,...",
        help="initial state in fractions, comma-separated: it fixes the conservation laws "
        "(e.g. a + b = 0.7) and starts the fixed-point search; used by every column",
    )
    g.add_argument(
        "--order",
        type=integer("order", 1, 2),
        help="expansion order: 1 (+ 1/N) or 2 (+ 1/N^2, default)",
    )
    g.add_argument(
        "--simulate",
        dest="simulate_flag",
        action="store_true",
        help="add a simulation estimate with its 95%% CI at each N (--sim-steps, --reps, --seed)",
    )


def model_table(args: argparse.Namespace) -> int:
    """The handler of ``mfstein table --model ...``: print the table (text, --json, --csv)."""
    from mfstein.cli.model_args import model_from_args, observables_from_args
    from mfstein.ground.errors import check_int

    for flag in ("gamma", "alpha", "d", "scheduler"):
        if getattr(args, flag, None) is not None:
            raise ParameterError(
                f"--{flag} is an option of the supermarket table; with --model give the "
                "model's parameters as --param (e.g. --param lam='1 - 0.1/N**0.05')."
            )
    if str(args.b).strip().lower() != "auto":
        raise ParameterError(
            "--b is an option of the supermarket table; with --model use --param b=..."
        )
    texts = observables_from_args(args)
    if not texts:
        raise ParameterError("observable is required with --model (--observable NAME or EXPR).")
    if not args.simulate_flag:
        from mfstein.cli.option_scope import refuse_unused

        simulation = ("sim_steps", "reps", "seed", "workers")
        refuse_unused(args, simulation, "with --simulate (the model table simulates only then)")
    if not args.N:
        raise ParameterError("N must list at least one integer >= 1.")
    for n in args.N:
        check_int("N", n, 1)
    order = 2 if args.order is None else args.order  # a heterogeneous model: 1 (see there)
    if order not in (1, 2):
        raise ParameterError(f"order must be 1 or 2, got {order!r}.")
    steps = (
        MODEL_TABLE_STEPS if args.sim_steps is None else check_int("sim-steps", args.sim_steps, 1)
    )
    reps = check_int("reps", args.reps, 2)
    if args.plot:
        from sim.figures import check_plot_path

        check_plot_path(args.plot)  # before the run: no work lost to an unwritable path
    model, params = model_from_args(args)
    from mfstein.cli import heterogeneous

    if heterogeneous.is_heterogeneous(model):
        tab = heterogeneous.table(args, model, params, steps=steps, reps=reps)
        return print_table(tab, args)
    from sim.accuracy import accuracy

    tab = accuracy(
        model,
        params,
        texts[0] if len(texts) == 1 else texts,  # several: one table each (AccuracyTables)
        args.N,
        order=order,
        exact=args.exact,
        simulate=args.simulate_flag,
        steps=steps,
        reps=reps,
        seed=args.seed,
        workers=args.workers,
        progress=progress_wanted(args),
        start=args.start,
    )
    return print_table(tab, args)


def print_table(tab: Any, args: argparse.Namespace) -> int:
    """Draw a table result's ``--plot``, then print it: ``--json``
    (:func:`mfstein.ground.streams.write_json`), ``--csv`` or the aligned text; the exit
    status (0)."""
    if args.plot:
        tab.plot(args.plot)
    if args.json:
        write_json(tab)
    elif args.csv:
        sys.stdout.write(tab.to_csv())
    else:
        print(tab.to_text())
        if args.plot:
            print(f"plot written to {args.plot}")
    return 0
