"""What the public entries do with a heterogeneous population.

``numeric.solve`` (and ``sim.simulate``) hand a
:class:`derive.heterogeneous_population.HeterogeneousModel` to the functions here, at
the top, after their own argument checks; ``numeric.exact.solve`` and
``numeric.transient`` reach their own routes for it
(:func:`numeric.exact.product.exact_heterogeneous`,
:func:`numeric.expansion.transient_heterogeneous.transient_heterogeneous`), which
read the parameters and the start here.

Importing this module loads neither SymPy nor the heterogeneous numerics (they are
imported by the functions that use them): ``sim.simulate`` asks
:func:`is_heterogeneous` before it reads a run prepared by an earlier process,
which must start simulating without SymPy (:mod:`sim.prepared_runs`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np

from mfstein.ground.errors import ParameterError
from numeric.precision import limited_blas

if TYPE_CHECKING:
    from derive.heterogeneous_population import HeterogeneousModel
    from numeric.heterogeneous import steady
    from numeric.heterogeneous.rates import Rates
    from numeric.heterogeneous.result import HeterogeneousSolution

#: The module that defines :class:`HeterogeneousModel` (it imports SymPy).
_MODEL_MODULE = "derive.heterogeneous_population"

#: The refusal of order 2 (one sentence).
NO_ORDER_2 = (
    "order must be 1 for a heterogeneous population: the 1/K^2 term of Allmeier and Gast's "
    "expansion is not established for K distinct objects, so only the mean field and its "
    "1/K term are given."
)


def is_heterogeneous(model: Any) -> bool:
    """Whether ``model`` is a heterogeneous population (dispatch test of the entries).

    No such model exists before its module is imported, so the test imports nothing
    (in particular not SymPy)."""
    defined = sys.modules.get(_MODEL_MODULE)
    return defined is not None and isinstance(model, defined.HeterogeneousModel)


def rates(model: HeterogeneousModel, params: Mapping[str, Any] | None, *,
          float64: bool) -> tuple[Rates, dict[str, str]]:
    """Parameters checked and parsed at the working precision, and the rates
    (:func:`numeric.heterogeneous.rates.checked`)."""
    from numeric.heterogeneous.rates import checked

    return checked(model, params, float64=float64)


def start_point(model: HeterogeneousModel, start: Sequence[Any] | str | None) -> np.ndarray:
    """The ODE's start: each object in its first state, or ``start`` (``K*S`` numbers,
    each object's summing to 1)."""
    K, S = model.K, model.S
    if start is None:
        x = np.zeros(K * S)
        x[::S] = 1.0
        return x
    from mfstein.ground.numbers import parse_real

    values = list(start) if not isinstance(start, str) else start.replace(",", " ").split()
    if len(values) != K * S:
        raise ParameterError(
            f"start must have K*S = {K * S} entries (object-major, each object's summing to 1), "
            f"got {len(values)}."
        )
    x = np.array([float(parse_real("start", v, 0, 1)) for v in values])
    if np.max(np.abs(x.reshape(K, S).sum(axis=1) - 1)) > 1e-12:
        raise ParameterError("start must give each object probabilities that sum to 1.")
    return x


@limited_blas()
def solve_heterogeneous(model: HeterogeneousModel, params: Mapping[str, Any] | None, *,
                        dps: int, order: int, start: Any, precision: str,
                        observables: Sequence[str] | str | None = None) -> HeterogeneousSolution:
    """The steady state: float64, or ``dps`` digits earned at two working precisions,
    with the declared ``observables`` named (:mod:`numeric.heterogeneous.observables`)."""
    from numeric.heterogeneous.observables import find, observe

    find(model, observables)  # an unknown name: one sentence before any work
    sol = _steady_state(model, params, dps=dps, order=order, start=start, precision=precision)
    return replace(sol, observables=observe(model, params, sol, observables))


def _steady_state(model: HeterogeneousModel, params: Mapping[str, Any] | None, *,
                  dps: int, order: int, start: Any, precision: str) -> HeterogeneousSolution:
    """:func:`solve_heterogeneous` without the observables."""
    from numeric.heterogeneous import steady
    from numeric.heterogeneous.result import HeterogeneousSolution
    from numeric.precision import agreeing_digits, earn_digits, guard_ladder

    if order != 1:
        raise ParameterError(NO_ORDER_2)
    x0 = start_point(model, start)
    with mpmath.workdps(dps + 20):
        R64, inputs = rates(model, params, float64=True)
    st = steady.steady64(R64, x0)
    common = {"model": model.name, "K": model.K, "S": model.S, "params": inputs,
              "object_names": model.object_names, "state_names": model.state_names}
    if precision == "float64":
        digits = steady.float64_digits(st)
        scale = [10.0**-digits * max(float(np.max(np.abs(a))), 1e-300) for a in (st.x, st.V)]
        errors = {"s_star": [scale[0]] * len(st.x), "V": [scale[1]] * len(st.V)}
        return HeterogeneousSolution(
            precision="float64", dps=15, digits=digits, s_star=list(st.x), V=list(st.V),
            W=st.W, errors=errors, condition=st.condition, **common,
        )

    def run(wp: int) -> steady.Steady:
        with mpmath.workdps(wp):
            R, _ = rates(model, params, float64=False)
            return steady.steady_mp(R, st.x, R64)

    def agree(lo: steady.Steady, hi: steady.Steady) -> int:
        return min(agreeing_digits(list(lo.x), list(hi.x)), agreeing_digits(list(lo.V), list(hi.V)))

    earned = earn_digits(dps, guard_ladder(dps), run, run, agree,
                         who="the heterogeneous steady state", where=model.name)
    hi, lo = earned.high, earned.low
    errors = {"s_star": earned.errors(list(hi.x), list(lo.x)),
              "V": earned.errors(list(hi.V), list(lo.V))}
    return HeterogeneousSolution(
        precision="dps", dps=dps, digits=min(dps, earned.digits), s_star=list(hi.x),
        V=list(hi.V), W=hi.W, errors=errors, condition=hi.condition, **common,
    )
