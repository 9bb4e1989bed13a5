"""Command-line options shared by several ``mfstein`` subcommands, declared once.

The arrival rate is given either directly (``--lam``) or in the core paper's
heavy-traffic form ``lam = 1 - gamma / N^alpha`` (``--gamma`` with
``--alpha``).  Every command that takes a rate declares the group with
:func:`add_arrival_rate` and turns the parsed arguments into a rate with
:func:`arrival_rate_text` (which calls :func:`numeric.precision.arrival_rate`,
the one place that checks the choice and the ranges).  Standard library only:
``mfstein --help`` imports nothing heavy.
"""

from __future__ import annotations

import argparse
from typing import Any

from mfstein.errors import ParameterError

__all__ = ["add_arrival_rate", "arrival_rate_text", "check_heavy_traffic_below_one"]

_TITLE = "arrival rate (give --lam, or --gamma with --alpha)"
_HELP = {
    "lam": "arrival rate per server, > 0 (decimal string, parsed exactly)",
    "gamma": "heavy traffic lam = 1 - gamma/N^alpha: 0 < gamma <= 1",
    "alpha": "heavy-traffic exponent, alpha >= 0",
}


def add_arrival_rate(
    parser: argparse.ArgumentParser, *, lam: bool = True, required: bool | None = None
) -> None:
    """Add ``--lam | --gamma --alpha`` to ``parser`` as one titled group.

    With ``lam=False`` only the heavy-traffic pair is offered, and both are
    required (``mfstein table`` reproduces the paper's tables, which are
    defined by ``gamma`` and ``alpha``).  Which combination was given is
    checked when the rate is resolved, by :func:`arrival_rate_text`, so that a
    bad combination is one sentence and exit status 2 like any other bad input.
    ``required=False`` leaves the pair optional for the command to check.
    """
    need = (not lam) if required is None else required
    group = parser.add_argument_group(_TITLE if lam else "heavy-traffic arrival rate")
    if lam:
        group.add_argument("--lam", help=_HELP["lam"])
    group.add_argument("--gamma", required=need, help=_HELP["gamma"])
    group.add_argument("--alpha", required=need, help=_HELP["alpha"])


def arrival_rate_text(args: argparse.Namespace, N: Any, *, dps: int = 30) -> str:
    """The rate as a decimal string: ``--lam`` as given, or ``1 - gamma/N^alpha``
    in ``dps`` digits; :class:`mfstein.errors.ParameterError` on a bad choice."""
    import mpmath

    from numeric.precision import arrival_rate

    lam = getattr(args, "lam", None)
    rate = arrival_rate(lam, args.gamma, args.alpha, N, dps=dps)
    return lam if lam is not None else mpmath.nstr(rate, dps)


def check_heavy_traffic_below_one(
    gamma: Any, alpha: Any, Ns: list[int], dps: int, *, b: Any = "auto"
) -> None:
    """Refuse a grid where ``lam = 1 - gamma/N^alpha`` is 1 at ``dps`` digits,
    i.e. ``gamma/N^alpha < 10^-dps``.

    A buffer of ``b = auto`` (or ``inf``) needs ``lam < 1``; when ``gamma/N^alpha``
    is below the working precision, the rate rounds to (about) 1 and the solver
    could only say "lam must be < mu", which hides the cause (``N`` too large
    for ``alpha``, ``gamma`` and ``dps``).  The sentence names the first such
    ``N``, the value of ``gamma/N^alpha`` and the largest ``N`` that still works.

    Parameters
    ----------
    gamma, alpha:
        The heavy-traffic pair as given (decimal strings), already range-checked.
    Ns:
        The sizes of the grid.
    dps:
        Working precision (significant decimal digits) of the rate.
    b:
        The buffer option, for the sentence.
    """
    import mpmath

    with mpmath.workdps(max(int(dps), 15) + 30):
        g, a = mpmath.mpf(str(gamma)), mpmath.mpf(str(alpha))
        floor = mpmath.power(10, -int(dps))
        for n in Ns:
            eps = g / mpmath.power(n, a)
            if eps >= floor:
                continue
            largest = mpmath.power(g * mpmath.power(10, int(dps)), 1 / a) if a > 0 else None
            most = f" (N <= {mpmath.nstr(largest, 3)} here)" if largest is not None else ""
            shown = str(n) if n < 10**9 else f"{n:.3g}"
            raise ParameterError(
                f"b = {b} needs lam < 1, but gamma = {gamma} and alpha = {alpha} give "
                f"lam = 1 - gamma/N^alpha = 1 - {mpmath.nstr(eps, 3)} at N = {shown}, which is 1 "
                f"to {dps} digits: give an integer b, or sizes with gamma/N^alpha above "
                f"10^-{dps}{most}."
            )
