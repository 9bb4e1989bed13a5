"""The arrival-rate options shared by several ``mfstein`` subcommands, declared once.

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

__all__ = ["add_arrival_rate", "arrival_rate_text"]

_TITLE = "arrival rate (give --lam, or --gamma with --alpha)"
_HELP = {
    "lam": "arrival rate per server, > 0 (decimal string, parsed exactly)",
    "gamma": "heavy traffic lam = 1 - gamma/N^alpha: 0 < gamma <= 1",
    "alpha": "heavy-traffic exponent, alpha >= 0",
}


def add_arrival_rate(
    parser: argparse.ArgumentParser,
    *,
    lam: bool = True,
    required: bool | None = None,
    float64: bool = False,
) -> None:
    """Add ``--lam | --gamma --alpha`` to ``parser`` as one titled group.

    With ``lam=False`` only the heavy-traffic pair is offered, and both are
    required (``mfstein table`` reproduces the paper's tables, which are
    defined by ``gamma`` and ``alpha``).  Which combination was given is
    checked when the rate is resolved, by :func:`arrival_rate_text`, so that a
    bad combination is one sentence and exit status 2 like any other bad input.
    ``required=False`` leaves the pair optional for the command to check.
    Each value is read exactly and checked against its range while the command
    line is parsed (:mod:`mfstein.cli.option_types`); ``float64=True`` (the
    float64 routes ``exact`` and ``simulate``) also refuses a rate below
    :data:`mfstein.ground.limits.FLOAT_MIN_RATE`.
    """
    from mfstein.cli.option_types import real
    from mfstein.ground.limits import FLOAT_MIN_RATE, MAX_LAM

    need = (not lam) if required is None else required
    group = parser.add_argument_group(_TITLE if lam else "heavy-traffic arrival rate")
    if lam:
        low = FLOAT_MIN_RATE if float64 else 0
        rate = real("lam", low, MAX_LAM, low_open=not float64)
        group.add_argument("--lam", type=rate, help=_HELP["lam"])
    gamma = real("gamma", 0, low_open=True)  # its upper limit is the command's (numeric)
    group.add_argument("--gamma", type=gamma, required=need, help=_HELP["gamma"])
    group.add_argument("--alpha", type=real("alpha", 0), required=need, help=_HELP["alpha"])


def arrival_rate_text(args: argparse.Namespace, N: Any, *, dps: int = 30) -> str:
    """The rate as a decimal string: ``--lam`` as given, or ``1 - gamma/N^alpha``
    in ``dps`` digits; :class:`mfstein.ground.errors.ParameterError` on a bad choice."""
    import mpmath

    from numeric.precision import arrival_rate

    lam = getattr(args, "lam", None)
    rate = arrival_rate(lam, args.gamma, args.alpha, N, dps=dps)
    return lam if lam is not None else mpmath.nstr(rate, dps)
