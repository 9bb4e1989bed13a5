"""The options of the commands that compute Theorem 1's constant ``c`` with
``E[(S - s*)^T M (S - s*)] ~ c/N`` (``solve`` for any model, ``bound`` and ``refined``
for the supermarket), declared once: the working precision, the observable ``M``,
JSON output and the proof of an enclosure of ``c``; and the mean-field options that
``solve``, ``sweep`` and ``transient`` share (``--order``, ``--float64``).  Standard
library only.
"""

from __future__ import annotations

import argparse

__all__ = ["add_constant_options", "add_float64_option", "add_order_option", "precision_of"]


def add_constant_options(p: argparse.ArgumentParser, *, certify: bool) -> None:
    """Add ``--dps``, ``--M``, ``--json`` and, with ``certify``, ``--certify`` to ``p``.

    ``M`` takes the forms of :mod:`numeric.quadratic_form` (``identity``, or
    ``diag:a,b,...`` padded with zeros to the dimension); ``--certify`` proves an
    enclosure ``[lo, hi]`` of ``c`` in Arb ball arithmetic
    (:meth:`numeric.MeanFieldSolution.certify`).
    """
    from mfstein.cli.option_types import integer
    from mfstein.ground.limits import MAX_DPS, MIN_DPS

    p.add_argument(
        "--dps",
        type=integer("dps", MIN_DPS, MAX_DPS),
        default=30,
        help=f"significant digits, integer >= {MIN_DPS} (default 30)",
    )
    p.add_argument(
        "--M",
        default="identity",
        help="quadratic observable (S - s*)^T M (S - s*): 'identity' (default) or "
        "'diag:a,b,...' (diagonal, padded with zeros to the dimension)",
    )
    p.add_argument("--json", action="store_true", help="print JSON (numbers as decimal strings)")
    if certify:
        p.add_argument(
            "--certify",
            action="store_true",
            help="also prove an enclosure [lo, hi] of c in Arb ball arithmetic (Krawczyk + "
            "Lyapunov certificates) and print its certified digits",
        )


def add_order_option(p: argparse.ArgumentParser, help: str) -> None:
    """Add ``--order {1,2}`` (default ``"1"``) to ``p``: 2 adds the 1/N^2 terms of the
    size expansion (:mod:`numeric.meanfield.stationary`); ``help`` says what the
    command then prints."""
    p.add_argument("--order", default="1", choices=("1", "2"), help=help)


def add_float64_option(p: argparse.ArgumentParser | argparse._ArgumentGroup, help: str) -> None:
    """Add ``--float64`` to ``p`` (a parser, or the group that makes it exclusive with
    ``--dps``): the float64 route of :func:`numeric.solve`, :func:`numeric.sweep` and
    :func:`numeric.transient`; ``help`` says what it means for the command.  Read by
    :func:`precision_of`."""
    p.add_argument("--float64", action="store_true", help=help)


def precision_of(args: argparse.Namespace) -> str:
    """The ``precision=`` keyword of the mean-field entry points: ``"float64"`` with
    ``--float64`` (:func:`add_float64_option`), else ``"dps"``."""
    return "float64" if getattr(args, "float64", False) else "dps"
