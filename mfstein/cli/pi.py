"""``mfstein pi``: the Persistent-Idle policy under batch arrivals (registered by ``mfstein.cli``).

Simulates (or, with ``--exact``, solves the truncated chain of) the model of
"On the Persistent-Idle Load Distribution Policy Under Batch Arrivals and Random
Service Capacity".  Only the standard library is imported here; numba, NumPy
and SciPy load inside the handler.
"""

from __future__ import annotations

import argparse

from mfstein.cli.option_types import integer
from mfstein.cli.simulate import add_batch_options, add_run_options, report, run_keywords
from mfstein.ground.limits import PI_MAX_SERVERS

POLICY_CHOICES = ("pi", "pi-split", "jiq", "jsq", "random")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``pi`` to the ``mfstein`` dispatcher."""
    p = subparsers.add_parser(
        "pi",
        help="Persistent-Idle (PI) dispatch under batch arrivals: simulation or exact chain",
        description=(
            "Discrete-time servers with i.i.d. batches a(t) and random capacities s_i(t) "
            "(On the Persistent-Idle Load Distribution Policy Under Batch Arrivals and Random "
            "Service Capacity).  Reports E[Q_i], E[Q_total], the mean delay E[Q_total]/E[a] "
            "(Little's law), P(idle) per server, messages per job (tokens: a server sends one "
            "when it becomes idle), the drift of Q_total and the path bound (37), each with "
            "a 95% batch-means confidence interval over replications seeded from "
            "SeedSequence(seed); or, with --exact, the stationary values of the chain "
            "(Q_1..Q_n, LI) truncated at an automatically chosen queue cap (n <= 3)."
        ),
        epilog=(
            "Servers: one --service per server, or a single --service shared by all; n is the "
            "number of --service options unless --n is given (then a single --service is "
            "repeated n times).  pmfs are value:probability lists, e.g. 0:.4,2:.2,4:.3,6:.1."
        ),
    )
    p.add_argument("--arrivals", required=True, help="batch-size pmf; needs P(a = 0) > 0")
    p.add_argument(
        "--service",
        action="append",
        required=True,
        help="capacity pmf of a server (support >= 1); repeat once per server",
    )
    p.add_argument("--policy", choices=POLICY_CHOICES, default="pi", help="default pi")
    p.add_argument(
        "--n",
        type=integer("n", 1, PI_MAX_SERVERS),
        help="number of servers (default: number of --service)",
    )
    p.add_argument(
        "--split-rule",
        help="pi-split only: module:function of a rule f(q, a, b, out) obeying eqs. (7), (8) "
        "(default: equal shares, remainder to a uniformly chosen subset of the idle servers)",
    )
    p.add_argument(
        "--exact", action="store_true", help="solve the truncated chain instead (n <= 3)"
    )
    add_run_options(p, "--slots", default=10**6, help="slots per replication (1e6)")
    add_batch_options(p)
    p.add_argument(
        "--allow-unstable",
        action="store_true",
        help="simulate a load E[a] / sum E[s_i] >= 1 (a transient run: drift, no steady state)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``mfstein pi``."""
    from mfstein.ground.errors import ParameterError

    if args.exact:
        from mfstein.cli.option_scope import refuse_unused
        from numeric.pi.exact import solve_pi_exact

        if args.split_rule:
            raise ParameterError("split-rule is not available with --exact (default rule only).")
        if args.allow_unstable:
            raise ParameterError("allow-unstable is for simulation; --exact needs load < 1.")
        simulation = ("slots", "reps", "seed", "workers", "batches", "checkpoint", "no_progress")
        refuse_unused(args, simulation, "by the simulation (without --exact)")
        from mfstein.ground.streams import show

        e = solve_pi_exact(args.arrivals, args.service, policy=args.policy, n=args.n)
        return show(e, args.json)
    from sim.pi import simulate_pi

    r = simulate_pi(
        args.arrivals,
        args.service,
        policy=args.policy,
        n=args.n,
        slots=args.slots,
        allow_unstable=args.allow_unstable,
        split_rule=args.split_rule,
        **run_keywords(args),
    )
    return report("pi", r, None if args.json else r.to_text())
