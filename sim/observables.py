"""Observables estimated by the generic simulator, with batch-means 95% CIs.

An observable ``g`` -- any expression in the model's states and parameters
(:func:`derive.observables.observable`: ``+ - * / **``, ``sqrt``, ``exp``,
``log``, ``Abs``, ``Min``, ``Max``) -- is compiled into the model's event loop
(:func:`sim.generic_kernels.chain_module`, ``observe_into``), which evaluates
it at every state the chain visits and accumulates, per batch of total time
``T_b``, its time integral ``G_b = sum w g(n / N)`` (``w`` the state's expected
holding time, the weight of every statistic of :mod:`sim.generic_kernels`).
Nothing is reconstructed from stored marginals, so a product of two
coordinates, ``s1*exp(s2)`` or ``Min(x, c)`` is estimated at any N.
``E[g(S_N)]`` is the ratio estimator ``sum_b G_b / sum_b T_b``
(:func:`sim.stats.ratio`) with its batch-means 95% confidence interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from mfstein.ground.errors import ParameterError


@dataclass(frozen=True)
class SimObservable:
    """An observable the simulator estimates: its name and its expression in the
    model's states and parameters (compiled into the event loop)."""

    #: The observable's name (declared, or the expression's text).
    name: str
    #: Its SymPy expression in the model's states and parameters.
    expr: sp.Expr


def prepare(model: Any, g: Any, params: Mapping[str, Any]) -> SimObservable:
    """Parse ``g`` against ``model`` (one sentence if it is not an expression the
    simulator can evaluate, or needs a parameter that ``params`` does not give)."""
    from numeric.prepared.observables import prepare_observable

    obs = prepare_observable(model, g)
    if obs.quadratic:
        raise ParameterError(
            "the quadratic observable is estimated by the simulator's own n_mse; give an "
            "expression in the state instead."
        )
    missing = sorted(p for p in obs.used_params if p not in params)
    if missing:
        raise ParameterError(f"observable {obs.name!r} needs parameter {', '.join(missing)}.")
    return SimObservable(name=obs.name, expr=obs.observable.expr)


def estimate(
    observables: Sequence[SimObservable], batches: Sequence[Mapping[str, Any]], T: np.ndarray
) -> dict[str, Any]:
    """Name -> :class:`sim.stats.Estimate` of ``E[g(S_N)]`` from the batches of
    :func:`sim.generic.advance` (``obs``: the time integral of each observable)."""
    from sim import stats

    G = np.array([s["obs"] for s in batches], dtype=float).reshape(len(batches), -1)
    out: dict[str, Any] = {}
    for j, o in enumerate(observables):
        if not np.isfinite(G[:, j]).all():
            raise ParameterError(
                f"observable {o.name!r} is not a finite real number on every state the "
                "simulation visited."
            )
        out[o.name] = stats.ratio(G[:, j], T)
    return out
