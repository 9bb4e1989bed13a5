"""``mfstein simulate`` and ``mfstein table`` (registered by ``mfstein.cli``).

Heavy imports (numba, numpy, scipy, dask, matplotlib) happen inside the handlers.
"""

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
from mfstein.cli.model_table import (
    MODEL_TABLE_STEPS,
    add_table_model_arguments,
    model_table,
    print_table,
)
from mfstein.cli.option_types import integer, integer_list, integer_or_word
from mfstein.cli.progress_options import (
    add_progress_option,
    add_scheduler_option,
    progress_wanted,
)
from mfstein.ground.limits import (
    MAX_D,
    SIM_MAX_B,
    SIM_MAX_BATCHES,
    SIM_MAX_N,
    SIM_MAX_REPS,
    SIM_MAX_SEED,
    SIM_MAX_STEPS,
    SIM_MAX_WORKERS,
)

#: Defaults of ``mfstein table``: sized so that N = 10, 100, 1000, 10000 takes a
#: few minutes on two cores (see benchmarks/bench_sim.py for the timing).
TABLE_STEPS = 2 * 10**8
TABLE_REPS = 4


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``simulate`` and ``table`` to the ``mfstein`` dispatcher."""
    _register_simulate(subparsers)
    _register_table(subparsers)


def add_run_options(
    p: argparse.ArgumentParser,
    length: str,
    *,
    required: bool = False,
    default: int | None = None,
    reps: int = 4,
    help: str,
) -> None:
    """The size of a simulation, declared once for every simulating command: its
    length option (``--steps``, ``--sim-steps``, ``--slots``), ``--reps``,
    ``--seed`` and ``--workers``, each an exact integer within its limit in
    :mod:`mfstein.ground.limits`."""
    name = length.lstrip("-")
    p.add_argument(
        length,
        type=integer(name, 1, SIM_MAX_STEPS),
        required=required,
        default=default,
        help=help,
    )
    p.add_argument(
        "--reps",
        type=integer("reps", 1, SIM_MAX_REPS),
        default=reps,
        help=f"replications (default {reps})",
    )
    p.add_argument(
        "--seed", type=integer("seed", 0, SIM_MAX_SEED), default=0, help="seed (default 0)"
    )
    p.add_argument(
        "--workers",
        type=integer("workers", 1, SIM_MAX_WORKERS),
        help="local worker processes (default: cores)",
    )


def add_batch_options(p: argparse.ArgumentParser) -> None:
    """The rest of what :func:`run_keywords` reads, declared once for the commands that
    run batched, checkpointed replications (``simulate``, ``pi``): ``--batches``,
    ``--checkpoint``, ``--no-progress`` and ``--json``."""
    p.add_argument(
        "--batches",
        type=integer("batches", 2, SIM_MAX_BATCHES),
        default=20,
        help="batches per replication (default 20)",
    )
    p.add_argument("--checkpoint", help="JSON checkpoint: written after each batch, resumed")
    add_progress_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The run options of a simulating command (``--reps``, ``--seed``, ``--workers``,
    ``--checkpoint``, ``--batches``, the progress bar) as keywords of its simulator."""
    return dict(
        reps=args.reps,
        seed=args.seed,
        workers=args.workers,
        checkpoint=args.checkpoint,
        batches=args.batches,
        progress=progress_wanted(args),
    )


def report(command: str, result: Any, text: str | None) -> int:
    """Print a simulation's warnings (one line each) and its report: ``text``, or
    with ``None`` the result as JSON (:func:`mfstein.ground.streams.write_json`); the exit
    status (130 when Ctrl-C or SIGTERM cut the run short and the completed batches
    were kept)."""
    from mfstein.ground.streams import write_json

    for w in result.warnings:
        print(f"mfstein {command}: warning: {w}", file=sys.stderr)
    if text is None:
        write_json(result)
    else:
        print(text)
    return 130 if result.interrupted else 0


def _register_simulate(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "simulate",
        help="simulate the finite-N system; N E||S-s*||^2, E[S], N Cov(S), ... with 95%% CIs",
        description=(
            "Simulate N servers with buffer b under power-of-d (or JSQ / random) dispatch, "
            "lam = arrival rate per server (or lam = 1 - gamma/N^alpha). Reports "
            "N E||S - s*||^2, E[S], N(E[S] - s*), N Cov(S), the queue-length pmf, the blocking "
            "fraction and (per-server policies) response times, each with a 95% batch-means "
            "confidence interval over replications seeded from SeedSequence(seed)."
        ),
    )
    p.add_argument("--N", type=integer("N", 1, SIM_MAX_N), required=True, help="number of servers")
    add_arrival_rate(p, float64=True)
    p.add_argument(
        "--b",
        type=integer("b", 1, SIM_MAX_B),
        help=f"buffer size per server (1..{SIM_MAX_B}; required without --model)",
    )
    add_choice_options(p)
    p.add_argument(
        "--policy",
        choices=("pod", "jsq", "random"),
        default="pod",
        help="dispatch: power-of-d (default), join-shortest-queue or random",
    )
    add_run_options(p, "--steps", required=True, help="events per replication")
    add_batch_options(p)
    add_scheduler_option(p)
    add_finite_n_model_arguments(p)  # --model, --param, --start, --truncation, --mu
    p.add_argument(
        "--engine",
        choices=("auto", "generic", "fast", "aggregated", "per-server", "interpreted"),
        default=None,
        help="the simulator (as engine= of sim.simulate): auto (default: the model's "
        "registered fast path when it applies, for the supermarket the aggregated CTMC on "
        "the counts; per-server for --policy jsq or random; else generic, on the "
        "interpreted loop until the runs put there have cost about what compiling the "
        "model's own loop costs, then compiled), "
        "generic (compiled from the model's kernels), fast, the supermarket's aggregated "
        "or per-server (FIFO queues with response times) engine, or interpreted (any "
        "model on the event loop compiled once for every model)",
    )
    p.set_defaults(handler=_simulate)


def _register_table(subparsers: argparse._SubParsersAction) -> None:
    t = subparsers.add_parser(
        "table",
        help="accuracy table over N: the core paper's Tables 1/2, or any model's observable",
        description=(
            "Without --model, the core paper's Tables 1/2: for each N, lam = 1 - gamma/N^alpha, "
            "the simulated N E||S - s*||^2 (mean +- 95% CI), Theorem 1's asymptotically tight "
            "bound (numeric.bound, b = auto) and, with --exact, the exact finite-N value where "
            "the state space allows. With --model and --observable G (repeatable: a table "
            "for each, computed together): for each N, the "
            "mean-field value g(s*), + 1/N, + 1/N^2 (--order), the exact value (--exact) and "
            "a simulation estimate with its 95% CI (--simulate); a value that cannot be "
            "computed at some N (a chain too large, an absorbing state) is a dash with its "
            "reason under the table; parameters may be expressions in N."
        ),
    )
    add_arrival_rate(t, lam=False, required=False)
    t.add_argument(
        "--N",
        type=integer_list("N", 1, SIM_MAX_N),
        required=True,
        help="comma-separated N values",
    )
    t.add_argument(
        "--b",
        type=integer_or_word("b", 1, SIM_MAX_B, ("auto",)),
        default="auto",
        help="simulated buffer: an integer or auto (default)",
    )
    t.add_argument(
        "--d", type=integer("d", 1, MAX_D), help="servers sampled per arrival (default 2)"
    )
    add_run_options(
        t,
        "--sim-steps",
        reps=TABLE_REPS,
        help=f"events per replication (default {TABLE_STEPS:.0e}; "
        f"{MODEL_TABLE_STEPS:.0e} with --model)",
    )
    add_scheduler_option(t)
    t.add_argument("--exact", action="store_true", help="add exact values for small N")
    t.add_argument("--plot", help="write N E||S-s*||^2 against N to this PNG file")
    add_progress_option(t)
    fmt = t.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON")
    fmt.add_argument("--csv", action="store_true", help="print CSV")
    add_table_model_arguments(t)
    t.set_defaults(handler=_table)


def _engine(args: argparse.Namespace) -> str:
    """The ``--engine`` asked for (``auto`` when none)."""
    return getattr(args, "engine", None) or "auto"


def _simulate(args) -> int:
    from mfstein.families.supermarket.simulate_short_form import simulate_supermarket

    engine = _engine(args)
    if engine in ("generic", "fast", "interpreted") and args.model is None:
        args.model = "supermarket"  # the model engines run the supermarket model too
    if args.model is not None or args.mu is not None or args.observable:
        args.model = args.model or "supermarket"  # --observable: the supermarket as a model
        return _run_model(args)
    refuse_model_options(args)
    if args.b is None:
        from mfstein.ground.errors import ParameterError

        raise ParameterError("b is required without --model (--b, an integer 1..200).")

    lam = arrival_rate_text(args, args.N)
    r = simulate_supermarket(
        args.N,
        lam,
        args.b,
        2 if args.d is None else args.d,
        replacement=not args.without_replacement,
        policy=args.policy,
        engine=None if engine == "auto" else engine,
        steps=args.steps,
        scheduler=args.scheduler,
        **run_keywords(args),
    )
    return report("simulate", r, None if args.json else r.to_text(short_form=True))


def _table(args) -> int:
    from mfstein.families.supermarket import table
    from mfstein.ground.errors import ParameterError, check_int

    if args.model is not None:
        return model_table(args)
    for flag, given in (("observable", bool(args.observable)), ("order", args.order is not None)):
        if given:
            raise ParameterError(f"--{flag} needs --model (with --observable G).")
    if args.param:
        raise ParameterError(
            "--param needs --model (the supermarket table takes --gamma and --alpha)."
        )
    if args.start is not None:
        raise ParameterError("--start needs --model (the supermarket table starts at N s*).")
    from mfstein.cli.option_scope import refuse_unused

    refuse_unused(args, ("simulate_flag",), "with --model (the supermarket table always simulates)")
    if args.gamma is None or args.alpha is None:
        raise ParameterError(
            "gamma and alpha are required without --model (--gamma G --alpha A, lam = 1 - G/N^A)."
        )
    args.d = 2 if args.d is None else args.d
    args.sim_steps = TABLE_STEPS if args.sim_steps is None else args.sim_steps
    if not args.N:
        raise ParameterError("N must list at least one integer >= 1.")
    for n in args.N:
        check_int("N", n, 1)
    b: int | str = args.b  # "auto" or an integer 1..SIM_MAX_B, read while parsing
    if args.plot:
        from sim.figures import check_plot_path

        check_plot_path(args.plot)  # before the run: no work lost to an unwritable path
    rows = table.build(
        args.gamma,
        args.alpha,
        args.N,
        b=b,
        d=args.d,
        steps=args.sim_steps,
        reps=args.reps,
        seed=args.seed,
        workers=args.workers,
        scheduler=args.scheduler,
        exact=args.exact,
        progress=progress_wanted(args, quiet_with_json=False),
    )
    tab = table.PaperTable(
        rows, args.gamma, args.alpha, args.d, args.seed, steps=args.sim_steps, reps=args.reps
    )
    return print_table(tab, args)


def _run_model(args: argparse.Namespace) -> int:
    """``mfstein simulate --model ...``: print the estimates (or one JSON object)."""
    from mfstein.cli.model_args import finite_n_task, observables_from_args
    from mfstein.ground.errors import ParameterError
    from sim.api import simulate

    engine = _engine(args)
    policy = getattr(args, "policy", "pod")
    model, params, finite_n = finite_n_task(args)
    if args.steps is None:
        raise ParameterError("steps is required (--steps, events per replication).")
    from mfstein.cli import heterogeneous

    if heterogeneous.is_heterogeneous(model):
        return heterogeneous.simulate(args, model, params, finite_n["N"],
                                      observables_from_args(args), run_keywords(args))
    r = simulate(
        model,
        params,
        **finite_n,
        engine=engine,
        policy=policy,
        steps=args.steps,
        scheduler=args.scheduler,
        observables=observables_from_args(args),
        **run_keywords(args),
    )
    return report("simulate", r, None if args.json else r.to_text())
