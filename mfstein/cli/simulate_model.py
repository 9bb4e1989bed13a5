"""``mfstein simulate --model ...``: simulation of any model from the command line.

:func:`add_options` adds ``--model``, ``--param``, ``--start``,
``--truncation``, ``--mu`` and ``--engine`` to ``simulate``; :func:`run` is the
handler's branch for ``--model``.  Importing this module loads only the
standard library.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_options(p: argparse.ArgumentParser) -> None:
    """Add the any-model options (``--model`` optional: without it, the supermarket CLI)."""
    from mfstein.cli.exact_model import add_options as add_model

    add_model(p)
    p.add_argument(
        "--engine",
        choices=("auto", "generic", "fast"),
        default="auto",
        help="with --model: the model's registered fast path (auto, the default, when it "
        "applies) or the generic simulator compiled from the model's kernels",
    )


def run(args: argparse.Namespace) -> int:
    """``mfstein simulate --model ...``: print the estimates (or one JSON object)."""
    from mfstein.cli.exact_model import model_and_params
    from mfstein.errors import ParameterError, check_int
    from sim.api import simulate

    if getattr(args, "policy", "pod") != "pod" or getattr(args, "simulator", None) is not None:
        raise ParameterError(
            "--policy and --simulator choose among the supermarket simulators; with --model "
            "use --engine (auto, generic or fast)."
        )
    model, params = model_and_params(args)
    N = check_int("N", args.N, 1)
    if args.steps is None:
        raise ParameterError("steps is required (--steps, events per replication).")
    r = simulate(
        model,
        params,
        N=N,
        engine=args.engine,
        start=args.start,
        truncation=args.truncation,
        steps=args.steps,
        reps=args.reps,
        seed=args.seed,
        workers=args.workers,
        scheduler=args.scheduler,
        checkpoint=args.checkpoint,
        batches=args.batches,
        progress=not args.no_progress and not args.json and sys.stderr.isatty(),
    )
    for w in r.warnings:
        print(f"mfstein simulate: warning: {w}", file=sys.stderr)
    print(r.to_json(indent=None) if args.json else describe(r))
    return 130 if r.interrupted else 0


def describe(r: Any) -> str:
    """The human-readable report of a :class:`sim.base.SimulationResult`."""
    pv = ", ".join(f"{k} = {v}" for k, v in r.params.items())
    lines = [
        f"{r.model} model, N = {r.N}" + (f", {pv}" if pv else "") + f" ({r.simulator} simulator)",
        f"seed = {r.seed}, {r.reps} replications x {r.steps:.3g} events "
        f"(warm-up {r.warmup:.3g}, {r.batches} batches), 95% CIs",
        f"N E||S - s*||^2 = {float(r.n_mse.mean):.5f} ± {float(r.n_mse.ci95):.5f}",
    ]
    if r.blocking is not None:
        lines.append(
            f"blocking        = {float(r.blocking.mean):.3e} ± {float(r.blocking.ci95):.1e}"
        )
    if r.mean_jobs is not None:
        lines.append(
            f"mean jobs/server= {float(r.mean_jobs.mean):.5f} ± {float(r.mean_jobs.ci95):.5f}"
        )
    lines.append("k   s*_k       E[S_k]                N(E[S_k] - s*_k)     N Var(S_k)")
    for k in range(r.b):
        lines.append(
            f"{k + 1:<3} {r.s_star[k]:<10.6f} {r.mean.mean[k]:.6f} ± {r.mean.ci95[k]:.6f}  "
            f"{r.n_bias.mean[k]:+9.4f} ± {r.n_bias.ci95[k]:.4f}  "
            f"{r.n_cov.mean[k, k]:.4f} ± {r.n_cov.ci95[k, k]:.4f}"
        )
    lines.append(f"{r.events:.3g} events, {r.events_per_second:.3g} events/s per core")
    return "\n".join(lines)
