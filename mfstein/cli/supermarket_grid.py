"""The supermarket options of the commands that work on a grid of system sizes
(``bound``, ``refined``, ``lemmas``), declared once.

A point of the power-of-d supermarket model is its arrival rate (``--lam``, or the
core paper's heavy-traffic ``lam = 1 - gamma/N^alpha``, :mod:`mfstein.cli.arrival`),
the system sizes ``--N``, the buffer ``--b`` and the number of servers sampled per
arrival ``--d``.  The values are kept as given and checked by the command's task
(:func:`mfstein.families.supermarket.short_form.bound`, :func:`numeric.lemmas.check`).  Standard
library and the ground only: ``mfstein --help`` imports nothing heavy.  The size check of
an exact run, ``check_exact_states``, is the family's own
(:mod:`mfstein.families.supermarket.exact_size`, named by its registration); its old
path here still works and warns.
"""

from __future__ import annotations

import argparse
from typing import Any

from mfstein.cli.arrival import add_arrival_rate

__all__ = ["add_supermarket_grid"]


def add_supermarket_grid(
    p: argparse.ArgumentParser, *, b_inf: bool = False, N_unless: str | None = None
) -> None:
    """Add ``--lam | --gamma --alpha``, ``--N``, ``--b`` and ``--d`` to ``p``.

    ``b_inf`` offers ``--b inf`` (the untruncated chain) beside an integer and
    ``auto``; ``N_unless`` names the option without which ``--N`` is required
    (``--N`` is then optional for the parser and checked by the command), else
    ``--N`` is required.
    """
    from mfstein.cli.option_types import checked_text, integer, integer_list, integer_or_word
    from mfstein.ground.limits import MAX_D, MAX_GRID_EXPONENT, NUMERIC_MAX_B

    add_arrival_rate(p)
    N_help = "comma-separated system sizes, integers >= 1, e.g. 10,100,1e3"
    p.add_argument(
        "--N",
        type=checked_text(integer_list("N", 1, 10**MAX_GRID_EXPONENT)),
        required=N_unless is None,
        help=N_help if N_unless is None else f"{N_help} (required unless {N_unless})",
    )
    words = ("auto", "inf") if b_inf else ("auto",)
    b_help = (
        "buffer: integer >= 1, 'auto' (default) or 'inf'"
        if b_inf
        else ("buffer: integer >= 1 or 'auto' (default)")
    )
    p.add_argument(
        "--b",
        type=checked_text(integer_or_word("b", 1, NUMERIC_MAX_B, words)),
        default="auto",
        help=b_help,
    )
    p.add_argument(
        "--d",
        type=integer("d", 1, MAX_D),
        default=2,
        help="servers sampled per arrival, integer >= 1 (default 2, as in the core paper)",
    )


def __getattr__(name: str) -> Any:
    """``check_exact_states``: moved to :mod:`mfstein.families.supermarket.exact_size`
    (the old path warns; imported only when asked for, not by ``mfstein --help``)."""
    if name == "check_exact_states":
        from mfstein.families.supermarket import exact_size
        from mfstein.ground.arguments import warn_renamed

        warn_renamed(__name__, name, f"{exact_size.__name__}.{name}")
        return exact_size.check_exact_states
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
