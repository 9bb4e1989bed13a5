"""The rate tensors of a heterogeneous population at given parameter values.

Each move is stored once with its flat coordinates (object-major, ``k*S + s``):
a unilateral move ``(k, s -> s')`` leaves ``k*S+s`` and enters ``k*S+s'``; a
pairwise move leaves ``i1 = k*S+s`` and ``i2 = k1*S+s1`` and enters
``j1 = k*S+s'`` and ``j2 = k1*S+s1'``.  Rates are float64 numbers or ``mpf`` at
the working precision of :data:`mpmath.mp`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np
import sympy as sp

from derive.heterogeneous_population import HeterogeneousModel
from mfstein.ground.errors import ParameterError

if TYPE_CHECKING:
    from numeric.heterogeneous.averaged import Averaged


@dataclass(frozen=True)
class Rates:
    """Moves of a heterogeneous population with their rates evaluated.

    ``uni``: ``(n, 2)`` int array ``(from, to)``; ``a``: their rates.
    ``pair``: ``(m, 4)`` int array ``(i1, i2, j1, j2)``; ``b``: their rates.
    ``a`` and ``b`` are float64 arrays, or object arrays of ``mpf``.
    ``avg``: the moves whose rates depend on the occupancy averages
    (:mod:`numeric.heterogeneous.averaged`), or ``None``.
    """

    K: int
    S: int
    uni: np.ndarray
    a: np.ndarray
    pair: np.ndarray
    b: np.ndarray
    avg: Averaged | None = None

    @property
    def n(self) -> int:
        """The number of coordinates ``K * S``."""
        return self.K * self.S


def _values(model: HeterogeneousModel, exprs: list[sp.Expr], values: Mapping[str, Any],
            float64: bool) -> dict[sp.Expr, Any]:
    """Each distinct rate expression evaluated once (``mpf`` or float)."""
    symbols = [sp.Symbol(p) for p in model.params]
    args = [values[p] for p in model.params]
    out: dict[sp.Expr, Any] = {}
    for e in exprs:
        if e in out:
            continue
        if e.is_Rational:
            v = mpmath.mpf(int(e.p)) / int(e.q)
        elif e.is_Float:
            v = mpmath.mpf(e)
        else:
            v = sp.lambdify(symbols, e, modules="mpmath")(*args)
        if not isinstance(v, mpmath.mpf) or not mpmath.isfinite(v) or v < 0:
            given = ", ".join(f"{k}={values[k]}" for k in model.params)
            raise ParameterError(
                f"the rate {e} of model {model.name} must be a finite number >= 0, got "
                f"{v} at {given or 'these parameters'}."
            )
        out[e] = float(v) if float64 else v
    return out


def evaluate(model: HeterogeneousModel, values: Mapping[str, Any], *, float64: bool) -> Rates:
    """The moves of ``model`` with rates at ``values`` (``mpf`` by name, parsed
    at the current working precision)."""
    S = model.S
    exprs = [u[-1] for u in model.unilateral] + [p[-1] for p in model.pairwise]
    table = _values(model, exprs, values, float64)
    dtype = float if float64 else object
    uni = np.array([(k * S + s, k * S + t) for k, s, t, _ in model.unilateral], dtype=np.int64)
    pair = np.array(
        [(k * S + s, k1 * S + s1, k * S + t, k1 * S + t1)
         for k, k1, s, s1, t, t1, _ in model.pairwise],
        dtype=np.int64,
    )
    a = np.array([table[u[-1]] for u in model.unilateral], dtype=dtype)
    b = np.array([table[p[-1]] for p in model.pairwise], dtype=dtype)
    from numeric.heterogeneous.averaged import compile_rates

    avg = compile_rates(model, values, float64=float64)
    return Rates(model.K, S, uni.reshape(-1, 2), a, pair.reshape(-1, 4), b, avg)


def checked(model: HeterogeneousModel, params: Mapping[str, Any] | None, *,
            float64: bool) -> tuple[Rates, dict[str, str]]:
    """Parameters checked and parsed at the working precision, and the rates; the
    given parameters as text for the result's inputs."""
    from numeric.params import check_names, parse_params

    given = check_names(model, params)
    values = parse_params(model, given)
    return evaluate(model, values, float64=float64), {k: str(v) for k, v in given.items()}
