"""The supermarket's size check of an exact run, before the model is built.

Named by ``FAST_PATHS["supermarket"].short_options.check``
(:mod:`mfstein.ground.fast_paths`); the command line runs it through
:func:`mfstein.cli.short_options.check_states`.  Standard library and the ground only.
"""

from __future__ import annotations

import math
from typing import Any

from mfstein.ground.errors import ParameterError, check_int
from mfstein.ground.limits import EXACT_MAX_STATES

__all__ = ["check_exact_states"]


def check_exact_states(N: Any, options: dict[str, Any]) -> None:
    """The supermarket chain of ``N`` servers with buffer ``b`` has ``C(N + b, b)``
    states (occupancy vectors): refuse more than the exact solver handles before
    the model is built and its lattice set up (minutes for ``b`` in the thousands).

    >>> check_exact_states(10, {"b": 3})  # C(13, 3) = 286 states
    >>> try:
    ...     check_exact_states(10**6, {"b": 5})
    ... except ParameterError as e:
    ...     print(str(e).partition(";")[0])
    N = 1000000, b = 5 gives 8.33e+27 states
    """
    b = options.get("b")
    if not isinstance(b, int) or isinstance(b, bool):
        return
    n = check_int("N", N, 1)
    states = math.comb(n + b, b)
    if states > EXACT_MAX_STATES:
        shown = f"{states:,}" if states < 10**15 else f"{float(states):.3g}"
        raise ParameterError(
            f"N = {n}, b = {b} gives {shown} states; the exact solver handles at most "
            f"{EXACT_MAX_STATES:,}: lower N or b, or simulate."
        )
