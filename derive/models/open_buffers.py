"""Buffers a power-of-d family chooses itself: ``b = "auto"`` and ``b = "inf"``.

The supermarket and JSQ(L) factories take an integer buffer, or one of
:data:`OPEN_BUFFERS`; then they return a :class:`derive.spec.Truncated` family,
resolved to a finite model once the arrival and service rates and the working
precision are known (as :func:`numeric.bound` does for ``b``):

``"auto"``  the smallest buffer at which Theorem 1's constant stops changing at
            ``digits`` digits, predicted from the infinite-buffer fixed point: the
            first level ``k`` with ``s*_k <= rho^(e_k)`` below ``10^-(digits + 2)``
            (:func:`derive.models.occupancy_levels.levels_above`; the prediction
            :func:`mfstein.families.supermarket.solver.auto_levels` makes for its scan);
``"inf"``   the infinite buffers, truncated two levels below ``10^-(digits + 10)``
            of the fixed point (:func:`derive.models.occupancy_levels.levels_for`).

Both need a load ``rho = lam/mu < 1`` (otherwise the constant grows without limit
in ``b``), checked in one sentence when the family is resolved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import sympy as sp

from derive.models.occupancy_levels import levels_above, levels_for
from derive.spec import ModelInfo, Truncated
from mfstein.ground.errors import ParameterError

#: The buffer sizes a family resolves itself.
OPEN_BUFFERS = ("auto", "inf")
#: Largest dimension an automatic truncation may reach.
MAX_LEVELS = 5000


def open_buffer(b: Any) -> str | None:
    """``"auto"`` or ``"inf"`` when ``b`` names one (any case), else ``None``."""
    if isinstance(b, str) and b.strip().lower() in OPEN_BUFFERS:
        return b.strip().lower()
    return None


def buffer_levels(kind: str, rho: Any, d: int, digits: int) -> int:
    """The buffer ``b = kind`` resolves to at load ``0 < rho < 1`` for ``digits``
    digits with ``d`` choices (module docstring)."""
    if kind == "auto":
        return levels_above(rho, d, digits + 2) + 1
    return levels_for(rho, d, digits + 10)


def open_family(
    kind: str,
    name: str,
    build: Callable[[int], Any],
    d: int,
    arrival: sp.Symbol,
    service: sp.Expr,
    info: ModelInfo,
) -> Truncated:
    """The family ``build(b)`` with ``b = kind`` chosen once ``arrival`` (a parameter)
    and ``service`` (a parameter, or a positive number) have values."""
    import mpmath

    free = isinstance(service, sp.Symbol)
    # "lam/mu must be < 1", or with a fixed rate "lam must be < the service rate 1"
    bound = "< 1" if free else f"< the service rate {service}"
    load = f"{arrival}/{service}" if free else f"{arrival}"

    def levels(params: Mapping[str, Any], digits: int) -> int:
        with mpmath.workdps(40):
            rate = params[str(service)] if free else mpmath.mpf(str(sp.N(service, 40)))
            rho = mpmath.mpf(params[str(arrival)]) / mpmath.mpf(rate)
            if not 0 < rho < 1:
                got = rho if free else rho * rate
                raise ParameterError(
                    f"{load} must be {bound} for b = {kind} (for a higher load the constant "
                    f"grows without limit in b), got {mpmath.nstr(got, 6)}; give an integer b."
                )
            n = buffer_levels(kind, rho, d, digits)
        if n > MAX_LEVELS:
            raise ParameterError(
                f"b = {kind} needs {n} levels at load {mpmath.nstr(rho, 6)} (more than "
                f"{MAX_LEVELS}); give an integer b."
            )
        return max(n, 1)

    params = (str(arrival), *((str(service),) if free else ()))
    return Truncated(name=name, build=build, levels=levels, params=params, info=info)
