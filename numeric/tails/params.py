"""Validation of the tail tools' parameters (one-sentence :class:`ParameterError`).

Standard library and NumPy only, so the command-line layer can validate cheaply.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mfstein.ground.errors import ParameterError, check_int

__all__ = ["check_eps", "check_n", "check_nonnegative_list", "eps_from_alpha", "parse_float"]


def parse_float(name: str, value: Any) -> float:
    """``value`` as a finite float, or :class:`ParameterError` naming ``name``.

    Read by the one number parser (:func:`mfstein.ground.numbers.parse_real`: ``"9/10"``,
    NumPy scalars, ASCII text only), then rounded once to the nearest double.
    """
    from mfstein.ground.numbers import parse_real

    exact = parse_real(name, value)
    try:
        return float(exact)
    except OverflowError:
        raise ParameterError(
            f"{name} must be a real number of magnitude below 1e308, got {value!r}."
        ) from None


def check_eps(eps: Any) -> float:
    """``eps = 1 - rho`` must lie in the open interval (0, 1)."""
    e = parse_float("eps", eps)
    if not 0.0 < e < 1.0:
        raise ParameterError(f"eps must lie in the open interval (0, 1), got {eps!r}.")
    if 1.0 - e == 1.0:  # the laws are float64: rho = 1 - eps would be 1
        raise ParameterError(
            f"eps must be >= 1.2e-16 (1 - eps must differ from 1 in float64), got {eps!r}."
        )
    return e


def check_n(n: Any, maximum: int | None = None) -> int:
    """Number of servers, an integer ``>= 1`` and ``<= maximum`` (default
    :data:`mfstein.ground.limits.SIM_MAX_N`, the servers any route can index)."""
    from mfstein.ground.limits import SIM_MAX_N

    return check_int("n", n, 1, SIM_MAX_N if maximum is None else maximum)


def eps_from_alpha(n: int, alpha: Any) -> float:
    """Many-server heavy traffic ``eps_n = n^(-alpha)``; needs ``alpha > 0`` and ``eps < 1``."""
    a = parse_float("alpha", alpha)
    if a <= 0.0:
        raise ParameterError(f"alpha must be > 0 (eps = n^-alpha), got {alpha!r}.")
    if n < 2:
        raise ParameterError(f"n must be >= 2 when eps is given as n^-alpha, got {n}.")
    return float(n) ** (-a)


def check_nonnegative_list(name: str, values: Iterable[Any] | str) -> list[float]:
    """Comma-separated text or an iterable of reals, each ``>= 0``."""
    if isinstance(values, str):
        items: list[Any] = values.split(",") if values.strip() else []
        if any(not t.strip() for t in items):
            raise ParameterError(
                f"{name} must be a comma-separated list of numbers >= 0 with no empty item, "
                f"got {values!r}."
            )
    else:
        items = list(values)
    out = [parse_float(name, v) for v in items]
    for v in out:
        if v < 0:
            raise ParameterError(f"{name} must be >= 0, got {v!r}.")
    return out
