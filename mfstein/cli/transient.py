"""``mfstein transient``: the transient system-size expansion of any model.

``E[S(t)] = x(t) + V(t)/N + A(t)/N^2 + O(1/N^3)`` from a deterministic start
``S(0) = s0``, with ``x`` the mean-field ODE solution and ``V``, ``W`` (``A``,
``B``) the moment ODEs of :mod:`numeric.expansion.transient`.  Importing this module
loads only the standard library; the numeric stack is imported by the handler.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mfstein.cli.constant_options import add_float64_option
from mfstein.cli.model_args import add_task_model_options
from mfstein.cli.option_scope import refuse_unused
from mfstein.cli.option_types import integer
from mfstein.ground.errors import ParameterError
from mfstein.ground.limits import (
    MAX_GRID_EXPONENT,
    MIN_DPS,
    TRANSIENT_MAX_DPS,
    TRANSIENT_MAX_TIMES,
)

#: File types ``--plot`` writes (matplotlib's Agg back end).
PLOT_SUFFIXES = (".png", ".pdf", ".svg", ".eps", ".ps", ".jpg", ".jpeg")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``mfstein transient`` to the dispatcher."""
    p = subparsers.add_parser(
        "transient",
        help="transient expansion x(t), V(t), W(t) (A, B) from a start (--model NAME|FILE.py:F)",
        description=(
            "Integrate the mean-field ODE dx/dt = f(x) from x(0) = s0 together with the "
            "moment ODEs of the system-size expansion: dV/dt = J V + H:W/2, "
            "dW/dt = J W + W J^T + Q (order 1) and C, B, A (order 2), so that "
            "E[S(t)] = x + V/N + A/N^2 + O(1/N^3) for the chain started at S(0) = s0 "
            "(Gast, Bortolussi, Tribastone, Perf. Eval. 129, 2019).  Conservation laws "
            "are removed; results are in the model's own coordinates.  Without --dps: "
            "float64 (SciPy solve_ivp, stiff-capable, rtol 1e-10; no digits claimed).  "
            "With --dps: mpmath's Taylor ODE solver at two precisions (at most 6 free "
            "coordinates, 3 at order 2), digits earned by their agreement; a heterogeneous "
            "population (order 1, any K) is integrated by Gragg-Bulirsch-Stoer extrapolation "
            "at two precisions instead."
        ),
        epilog=(
            "examples: mfstein transient --model sir --param beta=3 --param gamma=1 "
            "--param rho=0.5 --param a=0.1 --start 0.75,0.25,0 --t 0:10:11;  "
            "mfstein transient --model supermarket --param b=10 --param lam=0.9 "
            "--t 0:20:201 --order 2 --plot mean.png --N 100"
        ),
    )
    add_task_model_options(
        p,
        required=True,
        start_help="initial state s0 (model coordinates; default the model's reference point)",
    )
    p.add_argument(
        "--t",
        required=True,
        metavar="START:STOP:COUNT",
        help="COUNT equally spaced times from START to STOP, e.g. 0:10:101",
    )
    p.add_argument("--order", type=integer("order", 0, 2), default=1, help="0, 1 (default) or 2")
    prec = p.add_mutually_exclusive_group()
    prec.add_argument(
        "--dps",
        type=integer("dps", MIN_DPS, TRANSIENT_MAX_DPS),
        default=None,
        help=f"significant digits (integer {MIN_DPS}..{TRANSIENT_MAX_DPS}): mpmath route, "
        "small models",
    )
    add_float64_option(
        prec, "the float64 route (the default without --dps; as --float64 of solve and sweep)"
    )
    p.add_argument(
        "--integrator",
        "--method",
        dest="integrator",
        default=None,
        help="float64 solve_ivp method (without --dps): auto (default), LSODA, BDF, Radau, "
        "RK45, DOP853 (--method is the old name)",
    )
    p.add_argument("--plot", default=None, metavar="FILE.png", help="plot x(t) and x + V/N")
    p.add_argument(
        "--N",
        type=integer("N", 1, 10**MAX_GRID_EXPONENT),
        default=None,
        help="number of objects N for --plot (integer >= 1)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print JSON: times, x, V, W (A, B) at each time (float64 route: floats; "
        "--dps: decimal strings with the earned digits)",
    )
    p.set_defaults(handler=run)


def parse_grid(text: str) -> tuple[float, float, int]:
    """``"a:b:n"`` -> ``(a, b, n)``: ``n >= 1`` times from ``a`` to ``b``, ``0 <= a <= b``."""
    import math

    msg = (
        "--t must look like START:STOP:COUNT with 0 <= START < STOP and an integer "
        f"1 <= COUNT <= {TRANSIENT_MAX_TIMES} (START = STOP when COUNT = 1), e.g. 0:10:101, "
        f"got {text!r}."
    )
    parts = text.split(":")
    if len(parts) != 3:
        raise ParameterError(msg)
    from mfstein.ground.numbers import parse_integer, parse_real

    try:  # read exactly (no float overflow, no giant integers), then in float64
        a, b = (float(parse_real("t", x, 0, 10**300)) for x in parts[:2])
        n = parse_integer("t", parts[2], 1, TRANSIENT_MAX_TIMES)
    except ParameterError:
        raise ParameterError(msg) from None
    if not (math.isfinite(a) and math.isfinite(b)) or b < a:
        raise ParameterError(msg)
    if (n == 1) != (a == b):
        raise ParameterError(msg)
    return a, b, n


def check_plot_path(text: str) -> Path:
    """The ``--plot`` file, after checking that it can be written (nothing is created;
    :func:`mfstein.cli.output_files.check_output_file`)."""
    from mfstein.cli.output_files import check_output_file

    return check_output_file("--plot", text, PLOT_SUFFIXES)


def run(args: argparse.Namespace) -> int:
    """Handler of ``mfstein transient``."""
    a, b, n = parse_grid(args.t)
    order = args.order  # 0, 1 or 2, read while the command line was parsed
    if args.plot is None:
        refuse_unused(args, ("N",), "with --plot")
    elif args.N is None:
        raise ParameterError("--plot needs --N, the number of objects (an integer >= 1).")
    if args.dps is not None:
        refuse_unused(args, ("integrator",), "by the float64 route (without --dps)")
    plot = check_plot_path(args.plot) if args.plot is not None else None
    N = args.N

    import numpy as np

    from mfstein.cli.model_args import model_from_args, observables_from_args, parse_observables
    from numeric.expansion.transient import transient

    dps = args.dps
    texts = observables_from_args(args)
    model, params = model_from_args(args)
    from mfstein.cli.heterogeneous import is_heterogeneous

    objects = is_heterogeneous(model)
    if objects:  # K objects: their declared observables
        from numeric.heterogeneous.observables import find

        find(model, texts)
    elif texts and hasattr(model, "states"):  # a bad one: one sentence before any work
        parse_observables(model, texts, quadratic=False)
    times = np.linspace(a, b, n)
    import sys

    res = transient(
        model,
        params,
        times=times,
        start=args.start,
        order=order,
        precision="float64" if dps is None else "dps",
        dps=dps,
        integrator=args.integrator or "auto",
        progress=not args.json and sys.stderr.isatty(),
    )
    observed = {}
    if texts and objects:
        from numeric.expansion.transient_heterogeneous import trajectories as along

        observed = along(model, params, res, texts)
    elif texts:
        from numeric.expansion.transient_observables import trajectories

        observed = trajectories(res, model, texts, params)
    if plot is not None:
        _plot(res, plot, N)
    if observed:
        from dataclasses import replace

        res = replace(res, observables=observed)
    from mfstein.ground.streams import show

    show(res, args.json)
    if plot is not None and not args.json:
        print(f"plot written to {plot}")
    return 0


def _plot(res: Any, path: Path, N: int) -> None:
    """Draw ``x(t)`` (solid), ``x + V/N`` (dashed) and ``x + V/N + A/N^2`` (dotted);
    written atomically (:func:`mfstein.ground.io.atomic_write`: through a symbolic link, nothing
    half-written left behind)."""
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot(1, 1, 1)
    t = np.asarray(res.times, dtype=float)
    x = np.asarray(res.x, dtype=float)
    k_shown = min(len(res.states), 10)
    colors = [f"C{k % 10}" for k in range(k_shown)]
    for k in range(k_shown):
        ax.plot(t, x[:, k], color=colors[k], lw=1.2, label=f"{res.states[k]}: x")
        if res.V is not None:
            first = x[:, k] + np.asarray(res.V, dtype=float)[:, k] / N
            ax.plot(t, first, color=colors[k], lw=1.2, ls="--", label=f"{res.states[k]}: x + V/N")
        if res.A is not None:
            second = first + np.asarray(res.A, dtype=float)[:, k] / N**2
            ax.plot(t, second, color=colors[k], lw=1, ls=":", label="+ A/N^2")
    ax.set_xlabel("t")
    ax.set_ylabel("E[S(t)] expansion")
    title = f"{res.model}, N = {N}"
    if k_shown < len(res.states):
        title += f" (first {k_shown} of {len(res.states)} states)"
    ax.set_title(title)
    if k_shown * (1 + (res.V is not None) + (res.A is not None)) <= 12:
        ax.legend(fontsize=7)
    fig.tight_layout()
    from mfstein.ground.io import atomic_write

    kind = path.suffix.lstrip(".").lower()
    atomic_write(path, lambda fh: fig.savefig(fh, format=kind, dpi=120))
