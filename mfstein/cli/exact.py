"""``mfstein exact``: the exact stationary distribution of a small finite-N system
(the supermarket by ``--N --lam --b --d``, or any model by ``--model`` and ``--param``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mfstein.cli.arrival import add_arrival_rate, arrival_rate_text
from mfstein.cli.model_args import (
    add_choice_options,
    add_finite_n_model_arguments,
    refuse_model_options,
)
from mfstein.cli.option_scope import refuse_unused
from mfstein.cli.option_types import integer, real
from mfstein.ground.errors import ParameterError
from mfstein.ground.limits import EXACT_MAX_STATES, TRUNCATION_TOL, TRUNCATION_TOL_RANGE
from mfstein.ground.streams import show


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``exact`` to the ``mfstein`` dispatcher."""
    p = subparsers.add_parser(
        "exact",
        help="exact stationary distribution of the finite-N system (small N, b)",
        description=(
            "Solve the finite-N supermarket chain exactly (states N >= n_1 >= ... >= n_b >= 0) "
            "and report E[S], N(E[S] - s*), N E||S - s*||^2, N Cov(S), the queue-length "
            "distribution and the blocking probability.  Results are float64; their precision "
            "is stated by the residual ||pi Q||_1."
        ),
    )
    p.add_argument(
        "--N",
        type=integer("N", 1, EXACT_MAX_STATES),
        required=True,
        help="number of servers (integer >= 1)",
    )
    add_arrival_rate(p, float64=True)
    p.add_argument("--b", help="buffer size (integer >= 1; required without --model)")
    add_choice_options(p)
    p.add_argument(
        "--solver",
        "--method",
        dest="solver",
        default="auto",
        choices=("auto", "direct", "bicgstab", "gmres"),
        help="linear solver (default auto: sparse LU up to 3000 states, else BiCGSTAB; "
        "--method is the old name)",
    )
    p.add_argument(
        "--memory-limit",
        type=real("memory-limit", 0, 10**6, low_open=True),
        default=None,
        help="memory limit in GB (default: half the available memory)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_finite_n_model_arguments(p)  # --model, --param, --start, --truncation, --mu
    low, high = TRUNCATION_TOL_RANGE
    p.add_argument(
        "--truncation-tol",
        type=real("truncation-tol", low, high),
        help=(
            f"unbounded state spaces without --truncation: the largest stationary mass the "
            f"chosen truncation may cut (default {TRUNCATION_TOL:g}; {low} to {high})"
        ),
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``mfstein exact``."""
    from mfstein.families.supermarket.exact import solve_exact
    from mfstein.ground.errors import check_int

    if args.model is not None or args.mu is not None or args.observable:
        args.model = args.model or "supermarket"  # --observable: the supermarket as a model
        return _run_model(args)
    refuse_model_options(args)
    refuse_unused(args, ("truncation_tol",), "with --model")
    if args.b is None:
        raise ParameterError("b is required without --model (--b, an integer >= 1).")
    N = check_int("N", args.N, 1)
    lam = arrival_rate_text(args, N)
    d = 2 if args.d is None else args.d
    replacement = not args.without_replacement
    r = solve_exact(N, lam, args.b, d, replacement=replacement, **_solver_keywords(args))
    return show(r, args.json, short_form=True)


def _solver_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The exact solver's options as given (``--solver``, ``--memory-limit`` in GB,
    the progress bar unless ``--json`` or not on a terminal), as keywords of
    :func:`numeric.exact.general.solve` and
    :func:`mfstein.families.supermarket.exact.solve_exact`."""
    limit = None if args.memory_limit is None else float(args.memory_limit) * 1e9
    return dict(
        solver=args.solver,
        memory_limit=limit,
        progress=not args.json and sys.stderr.isatty(),
    )


def _run_model(args: argparse.Namespace) -> int:
    """``mfstein exact --model ...``: print the exact statistics (or one JSON object)."""

    from mfstein.cli.model_args import finite_n_task, observables_from_args, parse_observables
    from numeric.exact.general import solve

    texts = observables_from_args(args)
    model, params, finite_n = finite_n_task(args)
    from mfstein.cli import heterogeneous

    if heterogeneous.is_heterogeneous(model):
        return heterogeneous.exact(args, model, params, finite_n["N"], texts)
    if texts and hasattr(model, "states"):
        parse_observables(model, texts)  # a bad one: one sentence before the chain is solved
    r = solve(
        model, params, **finite_n, truncation_tol=args.truncation_tol, **_solver_keywords(args)
    )
    if texts:
        from dataclasses import replace

        r = replace(r, observables={t: r.expect(t) for t in texts})
    return show(r, args.json)


def describe_observables(values: dict[str, Any]) -> str:
    """Lines ``E[g] = mean (digits)   N Var = ...`` of each observable under the exact
    law: :func:`numeric.exact.text.expectations_text` (kept for old callers)."""
    from numeric.exact.text import expectations_text

    return expectations_text(values)
