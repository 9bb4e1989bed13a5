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
from mfstein.ground.streams import write_json


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
    from mfstein.ground.errors import check_int
    from numeric.exact.supermarket import solve_exact

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
    if args.json:
        write_json(r)
        return 0
    sampling = "without" if args.without_replacement else "with"
    out = [
        f"exact finite-N supermarket model: N = {r.N}, lam = {r.lam}, b = {r.n}, d = {r.d} "
        f"(sampling {sampling} replacement)",
        f"states {r.states:,}   solver {r.solver} ({r.iterations} iterations)   "
        f"residual ||pi Q||_1 = {r.residual:.2e}   {r.seconds:.2f} s",
        "",
        f"{'k':>3} {'s*_k':>12} {'E[S_k]':>12} {'N(E[S_k]-s*_k)':>16} {'N Var(S_k)':>12}",
    ]
    for k in range(r.n):
        out.append(
            f"{k + 1:>3} {r.s_star[k]:>12.6g} {r.mean[k]:>12.6g} {r.n_bias[k]:>16.6g} "
            f"{r.n_cov[k, k]:>12.6g}"
        )
    out += [
        "",
        f"N E||S - s*||^2       = {r.printed('n_mse')!r}",
        f"blocking probability  = {r.printed('blocking')!r}",
        f"mean jobs per server  = {r.printed('mean_jobs')!r}",
        "P(queue length = k)   = "
        + ", ".join(f"{k}: {v:.4g}" for k, v in enumerate(r.queue_length_pmf)),
    ]
    print("\n".join(out))
    return 0


def _solver_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The exact solver's options as given (``--solver``, ``--memory-limit`` in GB,
    the progress bar unless ``--json`` or not on a terminal), as keywords of
    :func:`numeric.exact.general.solve` and :func:`numeric.exact.supermarket.solve_exact`."""
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
    values = {t: r.expect(t) for t in texts}
    if args.json:
        from dataclasses import replace

        write_json(replace(r, observables=values) if values else r)
        return 0
    print(_describe_model(r))
    if values:
        print(describe_observables(values))
    return 0


def describe_observables(values: dict[str, Any]) -> str:
    """Lines ``E[g] = mean (digits)   N Var g = ...`` of each ``--observable`` under the
    exact law (:class:`numeric.meanfield.observables.ExactExpectation`: the mean
    with only the digits its error bound earns, a dash and the bound when none)."""
    out = [""]
    width = max(len(name) for name in values)
    for name, e in values.items():
        text = e.text()
        mean = (
            f"{text} ({e.digits} digits)" if text else f"- (|mean| <= {abs(e.mean) + e.error:.2g})"
        )
        out.append(f"E[{name}]{' ' * (width - len(name))} = {mean}   N Var = {e.n_variance:.6g}")
    return "\n".join(out)


def _describe_model(r: Any) -> str:
    """The human-readable report of a :class:`numeric.exact.ExactResult`."""
    pv = ", ".join(f"{k} = {v}" for k, v in r.params.items())
    out = [
        f"exact finite-N {r.model} model: N = {r.N}" + (f", {pv}" if pv else ""),
        f"states {r.states:,}   solver {r.solver} ({r.iterations} iterations)   "
        f"||pi Q||_1 / max q = {r.relative_residual:.1e} (tolerance {r.tolerance:.0e})   "
        f"{r.seconds:.2f} s",
        f"start n = {tuple(r.start)}"
        + (f", conserved c.n = {r.law_values}" if r.law_values else ""),
        "",
        f"{'k':>3} {'s*_k':>12} {'E[S_k]':>12} {'N(E[S_k]-s*_k)':>16} {'V_k':>12} "
        f"{'N Var(S_k)':>12} {'W_kk':>12}",
    ]
    for k in range(r.n):
        out.append(
            f"{k + 1:>3} {r.s_star[k]:>12.6g} {r.mean[k]:>12.6g} {r.n_bias[k]:>16.6g} "
            f"{r.V[k]:>12.6g} {r.n_cov[k, k]:>12.6g} {r.W[k, k]:>12.6g}"
        )
    mse = f"{r.printed('n_mse')!r}   (mean field c = {r.constant:.10g})"
    out += ["", f"N E||S - s*||^2       = {mse}"]
    if r.blocking is not None:
        out.append(f"blocking probability  = {r.printed('blocking')!r}")
    if r.mean_jobs is not None:
        out.append(f"mean jobs per server  = {r.printed('mean_jobs')!r}")
    if r.queue_length_pmf is not None:
        out.append(
            "P(queue length = k)   = "
            + ", ".join(f"{k}: {v:.4g}" for k, v in enumerate(r.queue_length_pmf))
        )
    out += [f"note: {n}" for n in r.notes]
    return "\n".join(out)
