"""``mfstein exact --model ...``: the exact solution of any model from the command line.

The options (``--model``, repeatable ``--param NAME=VALUE``, ``--start``,
``--truncation``, ``--mu``) are added to the ``exact`` subcommand by
:func:`add_options`; :func:`run` is the handler's branch for ``--model``.
Importing this module loads only the standard library.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from mfstein.errors import ParameterError


def add_options(p: argparse.ArgumentParser) -> None:
    """Add the any-model options (``--model`` optional: without it, the supermarket CLI)."""
    g = p.add_argument_group("any model (give --model; --N as above)")
    g.add_argument(
        "--model",
        metavar="NAME|FILE.py:FACTORY",
        help="a built-in model (supermarket, jsq_L, sir) or a factory in a Python file",
    )
    g.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a factory option (e.g. b=10) or a model parameter (e.g. lam=0.9); repeatable",
    )
    g.add_argument("--start", help="initial state in fractions, comma-separated")
    g.add_argument("--truncation", help="unbounded state spaces: keep n_k <= N * TRUNCATION")
    g.add_argument(
        "--mu",
        help="service rate of the supermarket model (default 1; with --model supermarket)",
    )


def _refuse_conflicts(args: argparse.Namespace, pairs: dict[str, str]) -> None:
    """One value per quantity: ``--lam``/``--gamma``, ``--b`` or an explicit ``--d``
    next to ``--param`` of the same name is refused (one sentence), as is
    ``--lam``/``--gamma`` for a model other than the supermarket (whose rates are
    ``--param``), instead of silently using one of them."""
    rate = next((f for f in ("lam", "gamma") if getattr(args, f, None) is not None), None)
    if rate is not None and args.model != "supermarket":
        raise ParameterError(
            f"--{rate} is the supermarket's arrival rate; model {args.model} takes its "
            "parameters as --param NAME=VALUE."
        )
    if rate is not None and "lam" in pairs:
        raise ParameterError(
            f"the arrival rate is given twice (--{rate} and --param lam=...); give one."
        )
    if getattr(args, "b", None) is not None and "b" in pairs:
        raise ParameterError("b is given twice (--b and --param b=...); give one.")
    d = getattr(args, "d", None)
    if d is not None and str(d).strip() != "2" and "d" in pairs:  # "2" is --d's default
        raise ParameterError("d is given twice (--d and --param d=...); give one.")


def model_and_params(args: argparse.Namespace) -> tuple[Any, dict[str, str]]:
    """The model and parameters named by ``--model``/``--param`` (and ``--mu``, ``--lam``,
    ``--b``, ``--d`` for the supermarket family when given)."""
    from mfstein.model_args import parse_pairs

    pairs = parse_pairs(list(getattr(args, "param", []) or []))
    _refuse_conflicts(args, pairs)
    b = getattr(args, "b", None)
    if b is not None and "b" not in pairs:
        pairs["b"] = str(b)  # refused with one sentence if the model has no option b
    d = getattr(args, "d", None)
    if d is not None and args.model == "supermarket" and "d" not in pairs:
        pairs["d"] = str(d)
    given_rate = getattr(args, "lam", None) is not None or getattr(args, "gamma", None) is not None
    if given_rate and args.model == "supermarket" and "lam" not in pairs:
        from mfstein.errors import check_int
        from mfstein.options import arrival_rate_text

        pairs["lam"] = arrival_rate_text(args, check_int("N", args.N, 1))
    mu = getattr(args, "mu", None)
    if mu is not None:
        if args.model != "supermarket":
            raise ParameterError(
                f"--mu is the supermarket's service rate; model {args.model} takes its "
                "rates as --param."
            )
        if "mu" in pairs:
            raise ParameterError("mu is given twice (--mu and --param mu=...).")
        pairs["mu"] = str(mu)
    from derive.models import load_model, split_values

    options, params = split_values(args.model, pairs)
    from mfstein.model_args import check_size_options

    check_size_options(options)
    if args.model == "supermarket":
        _check_supermarket_states(args.N, options)
    if args.model == "supermarket" and "mu" in pairs:
        options["mu"] = "mu"  # a free parameter, so that its range is checked
        params["mu"] = pairs["mu"]
    if args.model == "supermarket" and getattr(args, "without_replacement", False):
        options["replacement"] = False
    return load_model(args.model, **options), params


def _check_supermarket_states(N: Any, options: dict[str, Any]) -> None:
    """The supermarket chain of ``N`` servers with buffer ``b`` has ``C(N + b, b)``
    states (occupancy vectors): refuse more than the exact solver handles before
    the model is built and its lattice set up (minutes for ``b`` in the thousands)."""
    import math

    from mfstein.errors import check_int
    from mfstein.limits import EXACT_MAX_STATES

    b = options.get("b")
    if not isinstance(b, int) or isinstance(b, bool):
        return
    n = check_int("N", N, 1)
    states = math.comb(n + b, b)
    if states > EXACT_MAX_STATES:
        shown = f"{states:,}" if states < 10**15 else f"{float(states):.3g}"
        raise ParameterError(
            f"N = {n}, b = {b} gives {shown} states; the exact solver handles at most "
            f"{EXACT_MAX_STATES:,}: lower N or b, or simulate."
        )


def run(args: argparse.Namespace) -> int:
    """``mfstein exact --model ...``: print the exact statistics (or one JSON object)."""
    import sys

    from mfstein.errors import check_int
    from numeric.exact.general import solve

    model, params = model_and_params(args)
    N = check_int("N", args.N, 1)
    limit = None
    if getattr(args, "memory_limit", None) is not None:
        if not args.memory_limit > 0:
            raise ParameterError(
                f"memory-limit must be a positive number of GB, got {args.memory_limit}."
            )
        limit = args.memory_limit * 1e9
    r = solve(
        model,
        N,
        params,
        start=args.start,
        truncation=args.truncation,
        method=getattr(args, "method", "auto"),
        memory_limit=limit,
        progress=not args.json and sys.stderr.isatty(),
    )
    if args.json:
        print(json.dumps(r.to_json()))
        return 0
    print(describe(r))
    return 0


def describe(r: Any) -> str:
    """The human-readable report of a :class:`numeric.exact.general.ModelExactResult`."""
    pv = ", ".join(f"{k} = {v}" for k, v in r.params.items())
    out = [
        f"exact finite-N {r.model} model: N = {r.N}" + (f", {pv}" if pv else ""),
        f"states {r.states:,}   solver {r.method} ({r.iterations} iterations)   "
        f"||pi Q||_1 / max q = {r.relative_residual:.1e} (tolerance {r.tolerance:.0e})   "
        f"{r.seconds:.2f} s",
        f"start n = {tuple(r.start)}"
        + (f", conserved c.n = {r.law_values}" if r.law_values else ""),
        "",
        f"{'k':>3} {'s*_k':>12} {'E[S_k]':>12} {'N(E[S_k]-s*_k)':>16} {'V_k':>12} "
        f"{'N Var(S_k)':>12} {'W_kk':>12}",
    ]
    for k in range(r.b):
        out.append(
            f"{k + 1:>3} {r.s_star[k]:>12.6g} {r.mean[k]:>12.6g} {r.n_bias[k]:>16.6g} "
            f"{r.V[k]:>12.6g} {r.n_cov[k, k]:>12.6g} {r.W[k, k]:>12.6g}"
        )
    out += ["", f"N E||S - s*||^2       = {r.n_mse:.10g}   (mean field c = {r.constant:.10g})"]
    if r.blocking is not None:
        out.append(f"blocking probability  = {r.blocking:.6g}")
    if r.mean_jobs is not None:
        out.append(f"mean jobs per server  = {r.mean_jobs:.10g}")
    if r.queue_length_pmf is not None:
        out.append(
            "P(queue length = k)   = "
            + ", ".join(f"{k}: {v:.4g}" for k, v in enumerate(r.queue_length_pmf))
        )
    out += [f"note: {n}" for n in r.notes]
    return "\n".join(out)
