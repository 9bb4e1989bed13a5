"""Observables along a transient expansion: ``E[g(S(t))] = g(x(t)) + g1(t)/N + O(1/N^2)``.

With ``Y = S(t) - x(t)``, ``E[Y] = V(t)/N + O(1/N^2)`` and ``E[Y Y^T] = W(t)/N +
O(1/N^2)`` (:mod:`numeric.expansion.transient`), Taylor's formula for a smooth
``g`` at ``x(t)`` gives, as in the stationary case
(:mod:`numeric.meanfield.observables`),

    E[g(S(t))] = g(x(t)) + (g_i V_i + 1/2 g_ij W_ij)(t) / N + O(1/N^2),

the derivatives taken at ``x(t)``.  The ``1/N^2`` term needs the third moments
``C(t)``, which the transient solver does not integrate, so it is not given.
Values are evaluated in float64 from the trajectory (on the mpmath route too,
whose entries are rounded to float64 first): like the float64 route's own
numbers, they claim no digits (``TransientResult.precision``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mfstein.ground.errors import ParameterError

__all__ = ["ObservableTrajectory", "trajectories"]


@dataclass(frozen=True)
class ObservableTrajectory:
    """``g(x(t))`` and the coefficient ``g1(t)`` of ``1/N`` at each time (``None``
    at order 0), float64."""

    #: The observable's name (declared, or the expression's text).
    observable: str
    #: The observable's expression as text.
    expression: str
    #: The result's times ``t``.
    times: np.ndarray
    #: ``g(x(t))`` at each time.
    mean_field: np.ndarray
    #: The ``1/N`` coefficient ``g1(t) = sum_i d_i g V_i(t) + (1/2) sum_ij d_ij g W_ij(t)`` at each
    #: time; ``None`` when the result has no ``V`` and ``W`` (order 0).
    g1: np.ndarray | None

    def value(self, N: float) -> np.ndarray:
        """``g(x(t)) + g1(t)/N`` (``g(x(t))`` at order 0)."""
        return self.mean_field if self.g1 is None else self.mean_field + self.g1 / N

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"observable", "expression", "mean_field", "g1"}`` (floats at
        the result's ``times``; ``g1`` ``None`` at order 0)."""
        return {
            "observable": self.observable,
            "expression": self.expression,
            "mean_field": [float(v) for v in self.mean_field],
            "g1": None if self.g1 is None else [float(v) for v in self.g1],
        }


def trajectories(
    result: Any, model: Any, observables: Sequence[Any], params: Mapping[str, Any]
) -> dict[str, ObservableTrajectory]:
    """Each observable's :class:`ObservableTrajectory` along ``result`` (a
    :class:`numeric.expansion.transient.TransientResult` of ``model`` with the
    parameter values ``params``); ``observables`` as :func:`derive.observables.observable`
    takes them (the quadratic one is refused: it is a statement about ``s*``)."""
    from derive.observables import evaluate_all
    from numeric.meanfield.observables import resolve_model
    from numeric.prepared.observables import prepare_observable

    model = resolve_model(model, len(result.states))
    x = np.asarray(result.x, dtype=float)
    V = None if result.V is None else np.asarray(result.V, dtype=float)
    W = None if result.W is None else np.asarray(result.W, dtype=float)
    out: dict[str, ObservableTrajectory] = {}
    for g in observables:
        obs = prepare_observable(model, g)
        if obs.quadratic:
            raise ParameterError(
                "the quadratic observable is defined at the fixed point s*, not along a "
                "trajectory; give an expression in the state instead."
            )
        order = 0 if V is None else 2
        plan = obs.derivatives_to(order)
        every = evaluate_all(model, plan.plan, params, "numpy", obs.observable.expr)(x)
        tensors = plan.split([np.asarray(v, dtype=float) for v in every])
        mean = tensors[0][()]
        g1 = None
        if V is not None and W is not None:
            g1 = np.zeros(len(x))
            for (i,), v in tensors[1].items():
                g1 += v * V[:, i]
            for (i, j), v in tensors[2].items():
                weight = 0.5 if i == j else 1.0  # (i, j) and (j, i): one entry
                g1 += weight * v * W[:, i, j]
        if not np.all(np.isfinite(mean)) or (g1 is not None and not np.all(np.isfinite(g1))):
            raise ParameterError(
                f"observable {obs.name!r} is not a finite real number along the trajectory."
            )
        out[obs.name] = ObservableTrajectory(
            obs.name, obs.text, np.asarray(result.times, dtype=float), mean, g1
        )
    return out
