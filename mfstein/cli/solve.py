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
        _print_text(sol, states, dps)
        if sol.c2 is not None:
            print(sol.order2_text(states))
        if sol.observables:
            print_observables(sol.observables)
        if cert is not None:
            print(
                f"certified: c in {cert.interval()}  ({cert.certified_digits} certified digits; "
                f"Arb, {cert.prec} bits)"
            )
    return 0


def _state_names(model, b: int) -> list[str]:
    states = getattr(model, "states", None)
    if states is not None and len(states) == b:
        return [str(s) for s in states]
    return [f"s{k}" for k in range(1, b + 1)]


def _print_text(sol, states: list[str], dps: int) -> None:
    from mfstein.ground.display import columns
    from numeric.precision import solution_entries, to_str

    shown = min(12, dps)
    params = ", ".join(f"{k} = {v}" for k, v in sol.params.items()) or "none"
    print(f"model {sol.model} ({', '.join(states)}); {params}")
    if sol.conservation:
        laws = [
            " + ".join(
                f"{c}*{s}" if c != "1" else s for c, s in zip(row, states, strict=True) if c != "0"
            )
            for row in sol.conservation
        ]
        print(f"conserved: {'; '.join(laws)}")
    s_str, _ = solution_entries(sol, "s_star", shown)
    v_str, ev = solution_entries(sol, "V", shown)
    w_str, ew = solution_entries(sol, "W", shown, [k * sol.n + k for k in range(sol.n)])
    rows = [[states[k], s_str[k], v_str[k], w_str[k]] for k in range(sol.n)]
    print(columns(rows, ["state", "s*", "V", "W (diagonal)"]))
    print(
        f"c = {to_str(sol.constant, sol.digits)}  ({sol.digits} correct digits; routes "
        f"{', '.join(sol.routes)} agree)"
    )
    print(
        f"({shown} significant digits shown at most, only those each entry's error allows; "
        f"--json prints {dps} and all of W; the V and W shown are within {ev} and {ew} "
        "absolute, entries without a correct digit print as 0)"
    )
    for note in sol.notes:
        print(f"note: {note}")
    for fp in sol.fixed_points:
        print(f"other stable fixed point: ({', '.join(f'{v:.10g}' for v in fp)})")


#: Significant digits an observable's term shows at most in the text output.
SHOWN = 12


def print_observables(expansions: dict) -> None:
    """Text table of each ``--observable``'s expansion ``E[g(S_N)] = g0 + g1/N + g2/N^2``
    and ``lim N Var g``: every entry with only the digits its error bound allows
    (:meth:`numeric.meanfield.observables.ObservableExpansion.text`), a dash with
    the bound where not one digit is earned."""
    import mpmath

    from mfstein.ground.display import columns

    keys = ["g0", "g1"] + (["g2"] if any(e.g2 is not None for e in expansions.values()) else [])
    keys.append("variance")
    head = {
        "g0": "mean field g0",
        "g1": "1/N term g1",
        "g2": "1/N^2 term g2",
        "variance": "lim N Var g",
    }
    rows = []
    for name, e in expansions.items():
        row = [name]
        for k in keys:
            value = getattr(e, k)
            text = None if value is None else e.text(k)
            if text is not None:  # rounded to at most SHOWN of the digits it earned
                text = mpmath.nstr(value, min(SHOWN, e.digits[k]), strip_zeros=False)
            row.append("-" if text is None else f"{text} ({e.digits[k]} digits)")
        rows.append(row)
    print(columns(rows, ["observable"] + [head[k] for k in keys]))
    print(
        "E[g(S_N)] = g0 + g1/N"
        + (" + g2/N^2" if "g2" in keys else "")
        + f" + ...  ({SHOWN} significant digits shown at most; (n digits) is what each "
        "term earned, all printed by --json)"
    )
