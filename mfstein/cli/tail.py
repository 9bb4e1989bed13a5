"""``mfstein tail``: exponential tails of JSQ, M/M/n and the SSQ (registered by ``mfstein.cli``).

Exact laws come from :mod:`numeric.tails`, simulation from :mod:`sim.tails`.
Everything heavy (NumPy, SciPy, numba) is imported inside the handler; every
numeric option is read by its typed parser while the command line is parsed
(:mod:`mfstein.cli.option_types`), and the simulation's options without
``--simulate`` are refused (:mod:`mfstein.cli.option_scope`), so bad input gives
one sentence on standard error and exit status 2 through the dispatcher.
"""

from __future__ import annotations

import argparse
import sys

from mfstein.cli.option_scope import refuse_unused
from mfstein.cli.option_types import integer, real
from mfstein.cli.progress_options import add_progress_option, progress_wanted
from mfstein.ground.errors import ParameterError
from mfstein.ground.limits import (
    SIM_MAX_N,
    SIM_MAX_REPS,
    SIM_MAX_SEED,
    SIM_MAX_STEPS,
    SIM_MAX_WORKERS,
)
from mfstein.ground.streams import show

#: ``--events`` and ``--reps`` when not given (with ``--simulate``).
EVENTS = 10**6
REPS = 8


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``mfstein tail`` to the dispatcher."""
    p = subparsers.add_parser(
        "tail",
        help="P(eps qbar > x), E[eps qbar], distance to Exp(1), decay rate, q_perp MGF",
        description=(
            "Exponential tails of the scaled total queue eps*qbar (Jhunjhunwala, Hurtado-Lange, "
            "Maguluri, 'Exponential Tail Bounds on Queues: A Confluence of Non-Asymptotic Heavy "
            "Traffic and Large Deviations'): n servers of rate 1, Poisson arrivals at rate "
            "n(1 - eps). Exact laws: M/M/n (Erlang C), the discrete-time SSQ q' = max(q + a - s, "
            "0) (roots method; default a ~ Bin(n, (1-eps)/2), s ~ Bin(n, 1/2)), JSQ for small n "
            "(level-phase QBD, phase truncation chosen from the neglected mass). --simulate "
            "runs the JSQ simulator instead (95% CIs over replications)."
        ),
    )
    p.add_argument("--model", default="jsq", help="jsq (default), mmn or ssq")
    n_type = integer("n", 1, SIM_MAX_N)
    p.add_argument("--n", type=n_type, required=True, help="number of servers, integer >= 1")
    p.add_argument(
        "--eps",
        type=real("eps", 0, 1, low_open=True, high_open=True),
        help="heavy-traffic parameter eps = 1 - rho in (0, 1)",
    )
    p.add_argument(
        "--alpha",
        type=real("alpha", 0, low_open=True),
        help="many-server heavy traffic: eps = n^-alpha (instead of --eps)",
    )
    p.add_argument("--x", default="1", help="comma-separated x >= 0 for P(eps qbar > x)")
    p.add_argument(
        "--theta", default="", help="comma-separated theta >= 0 for E exp(theta ||q_perp||) (jsq)"
    )
    p.add_argument("--arrival-pmf", help="ssq: P(a=0),P(a=1),... (with --service-pmf)")
    p.add_argument("--service-pmf", help="ssq: P(s=0),P(s=1),... (eps is then 1 - E a/E s)")
    p.add_argument("--simulate", action="store_true", help="simulate JSQ instead of solving")
    sim = p.add_argument_group("simulation (with --simulate only)")
    sim.add_argument(
        "--events",
        type=integer("events", 1, SIM_MAX_STEPS),
        help=f"simulated events per replication (default {EVENTS:.0e})",
    )
    sim.add_argument(
        "--reps",
        type=integer("reps", 2, SIM_MAX_REPS),
        help=f"replications, >= 2 (default {REPS})",
    )
    sim.add_argument("--seed", type=integer("seed", 0, SIM_MAX_SEED), help="seed (default 0)")
    sim.add_argument(
        "--workers",
        type=integer("workers", 1, SIM_MAX_WORKERS),
        help="local worker processes (default 1)",
    )
    sim.add_argument("--checkpoint", help="JSON checkpoint of completed replications")
    add_progress_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run_tail)


def _float_list(text: str) -> list[float]:
    from numeric.tails.params import parse_float

    items = text.split(",")
    if not all(t.strip() for t in items):
        raise ParameterError(f"a pmf must list numbers with no empty item, got {text!r}.")
    return [parse_float("pmf entry", t) for t in items]


#: Largest x of P(eps qbar > x): the laws are evaluated at the integer x / eps
#: (int64), and beyond x = 1000 every probability is below the smallest double.
MAX_X = 1e6


def run_tail(args: argparse.Namespace) -> int:
    """Handler of ``mfstein tail``."""
    from numeric.tails.params import check_eps, check_n, check_nonnegative_list, eps_from_alpha

    model = str(args.model).strip().lower()
    if model not in ("jsq", "mmn", "ssq"):
        raise ParameterError(f"model must be one of jsq, mmn, ssq, got {args.model!r}.")
    n = check_n(args.n)
    pmfs = args.arrival_pmf is not None or args.service_pmf is not None
    if args.eps is not None and args.alpha is not None:
        raise ParameterError("eps and alpha are exclusive: give eps in (0, 1) or alpha > 0.")
    if pmfs:
        if model != "ssq":
            raise ParameterError("arrival-pmf and service-pmf are only allowed with --model ssq.")
        if args.arrival_pmf is None or args.service_pmf is None:
            raise ParameterError("arrival-pmf and service-pmf must be given together.")
        if args.eps is not None or args.alpha is not None:
            raise ParameterError("eps must be omitted with explicit pmfs (it is 1 - E a/E s).")
        eps = None
    elif args.alpha is not None:
        eps = check_eps(eps_from_alpha(n, args.alpha))
    elif args.eps is not None:
        eps = check_eps(args.eps)
    else:
        raise ParameterError("eps must be given (a number in (0, 1)), or alpha > 0.")
    xs = check_nonnegative_list("x", args.x)
    if not xs:
        raise ParameterError("x must list at least one number >= 0.")
    if max(xs) > MAX_X:
        raise ParameterError(f"x must be a number from 0 to {MAX_X:g}, got {max(xs)!r}.")
    thetas = check_nonnegative_list("theta", args.theta)
    if not args.simulate:
        refuse_unused(args, ("events", "reps", "seed", "workers", "checkpoint"), "with --simulate")
    else:
        if model != "jsq":
            raise ParameterError(f"simulate is available for model jsq only, got {model}.")
        from sim.tails import simulate_jsq_tails

        r = simulate_jsq_tails(
            n,
            eps,
            xs,
            thetas=thetas,
            events=EVENTS if args.events is None else args.events,
            reps=REPS if args.reps is None else args.reps,
            seed=args.seed or 0,
            workers=args.workers or 1,
            checkpoint=args.checkpoint,
            progress=progress_wanted(args),
        )
        for w in r.warnings:
            print(f"mfstein tail: warning: {w}", file=sys.stderr)
        show(r, args.json)
        return 0 if r.complete else 130
    from numeric.tails.report import exact_tails

    kw = {}
    if pmfs:
        kw = dict(
            arrival_pmf=_float_list(args.arrival_pmf), service_pmf=_float_list(args.service_pmf)
        )
    progress = model == "jsq" and progress_wanted(args)
    rep = exact_tails(model, n, eps, xs, thetas=thetas, progress=progress, **kw)
    return show(rep, args.json)
