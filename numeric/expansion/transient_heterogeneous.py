"""The transient of a heterogeneous population (what ``numeric.transient`` runs for one).

:func:`transient_heterogeneous` is the route: float64 (:mod:`numeric.heterogeneous.transient`,
digits from two tolerances) or ``dps`` digits (:func:`transient_dps`, below);
:func:`trajectories` follows its declared observables along the result.

The route at ``dps`` digits, to order 1:

The moment equations of :mod:`numeric.heterogeneous.transient` on the ``K x S``
coordinates, evaluated on fixed-point integers
(:class:`numeric.heterogeneous.fixed_point.FixedSystem`) and integrated by
Gragg-Bulirsch-Stoer extrapolation (:mod:`numeric.heterogeneous.extrapolation`)
with the local tolerance ``10^-(wp - 5)`` at ``wp`` digits (``P = wp log2(10) + 24``
fraction bits).  It runs twice, at ``wp = dps + 10`` and ``dps + 20`` (then
``2 dps + 10`` and ``2 dps + 20``; :func:`numeric.precision.earn_digits`), and
``digits`` is the number of significant digits on which the two agree,
norm-wise for each of ``x, V, W`` at each time; each entry keeps the digits its
own difference allows.  ``V = K v``, so ``E[X(t)] = x(t) + V(t)/K + O(1/K^2)``.
Averaged moves (rates that are functions of the population averages) are
evaluated at each step by :mod:`numeric.heterogeneous.fixed_averaged`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np

from mfstein.ground.errors import ParameterError
from numeric.expansion.transient_result import TransientResult
from numeric.heterogeneous.entry import NO_ORDER_2
from numeric.heterogeneous.rates import Rates
from numeric.precision import limited_blas

if TYPE_CHECKING:
    from derive.heterogeneous_population import HeterogeneousModel

#: The local tolerance at ``wp`` working digits is ``10^-(wp - TOL_GAP)`` (the error
#: estimate is that of the second-best column, so the accepted one is far closer).
TOL_GAP = 5
#: Right-hand-side evaluations one run may spend (each about 0.1 s at K S = 150).
MAX_EVALS = 20_000


@dataclass(frozen=True, repr=False)
class HeterogeneousTransient(TransientResult):
    """:class:`numeric.expansion.transient.TransientResult` of this route (its
    sentence on precision names the integrator that ran)."""

    def precision(self) -> str:
        """One sentence: what the numbers are and how accurate."""
        return (
            f"decimal strings with at most {self.dps} significant digits, each keeping only "
            "the digits on which two runs of Gragg-Bulirsch-Stoer extrapolation (two working "
            "precisions and two tolerances) agree for that entry (within one unit of its last "
            f"digit; <name>_abs_error holds for every entry); {self.digits} digits agree "
            "norm-wise"
        )


def _start(x0: np.ndarray, K: int, S: int, P: int, order: int) -> np.ndarray:
    """``(x0, v = 0, vec W0)`` in fixed point, ``W0`` the independent objects' covariance."""
    from numeric.heterogeneous.fixed_numbers import to_fixed, zeros

    n = K * S
    x = np.array([to_fixed(float(v), P) for v in x0], dtype=object)
    if order == 0:
        return x
    W = zeros((n, n))
    for k in range(K):
        p = x[k * S:(k + 1) * S]
        block = -(np.outer(p, p) >> P)
        block[np.arange(S), np.arange(S)] += p
        W[k * S:(k + 1) * S, k * S:(k + 1) * S] = block
    return np.concatenate([x, zeros(n), W.ravel()])


def _rate_scale(R: Rates, x0: np.ndarray) -> float:
    """The largest total rate out of a coordinate (float64; averaged moves at ``x0``):
    sets the first step."""
    from numeric.heterogeneous.averaged import rates_at

    out = np.zeros(R.n)
    np.add.at(out, R.uni[:, 0], np.abs(R.a.astype(float)))
    if R.avg is not None:
        x = np.array([mpmath.mpf(float(v)) for v in x0], dtype=object)
        np.add.at(out, R.avg.src, np.abs(rates_at(R.avg, x).astype(float)))
    np.add.at(out, R.pair[:, 0], np.abs(R.b.astype(float)))
    np.add.at(out, R.pair[:, 1], np.abs(R.b.astype(float)))
    return float(max(out.max(initial=0.0), 1e-3))


def run(R: Rates, x0: np.ndarray, times: np.ndarray, wp: int, order: int) -> dict[str, np.ndarray]:
    """``x``, ``V = K v``, ``W`` at ``times`` (``mpf`` object arrays at ``wp`` digits);
    ``R`` holds the rates at ``wp`` digits."""
    from mfstein.ground.progress import stage
    from numeric.heterogeneous.extrapolation import Extrapolation
    from numeric.heterogeneous.fixed_numbers import from_fixed, to_fixed
    from numeric.heterogeneous.fixed_point import FixedSystem

    P = math.ceil(wp * math.log2(10)) + 24
    system = FixedSystem(R, P)
    horizon = float(times[-1])

    def shown(t: int) -> None:
        stage(f"{wp} digits, t = {float(mpmath.ldexp(t, -P)):.4g} of {horizon:g}")

    integ = Extrapolation(lambda z: system.rhs(z, order), P, wp - TOL_GAP, MAX_EVALS, shown)
    uniq, inverse = np.unique(times, return_inverse=True)
    ends = [to_fixed(float(t), P) for t in uniq]
    H0 = to_fixed(0.5 / _rate_scale(R, x0), P)
    Z = integ.run(_start(x0, R.K, R.S, P, order), ends, H0)
    n, m = R.n, len(times)
    with mpmath.workdps(wp):
        Y = from_fixed(np.array([Z[i] for i in inverse], dtype=object), P)
        out = {"x": Y[:, :n]}
        if order:
            out["V"] = R.K * Y[:, n:2 * n]
            out["W"] = Y[:, 2 * n:].reshape(m, n, n)
    return out


def transient_dps(model: Any, params: Mapping[str, Any] | None, x0: np.ndarray,
                  times: np.ndarray, dps: int, order: int) -> HeterogeneousTransient:
    """The route at ``dps`` digits."""
    from numeric.heterogeneous.rates import checked as rates
    from numeric.precision import agreeing_digits, earn_digits

    def compute(wp: int) -> dict[str, np.ndarray]:
        with mpmath.workdps(wp):
            R, _ = rates(model, params, float64=False)
        return run(R, x0, times, wp, order)

    def agreement(low: dict, high: dict) -> int:
        return min(agreeing_digits(list(high[name][k].flat), list(low[name][k].flat))
                   for name in high for k in range(len(times)))

    with mpmath.workdps(dps + 10):
        _, inputs = rates(model, params, float64=False)
    earned = earn_digits(dps, [(dps + g, dps + 2 * g) for g in (10, 10 + dps)], compute,
                         compute, agreement, who="the two runs of the heterogeneous transient",
                         where=f"model {model.name}")
    high, low = earned.high, earned.low
    errors = {name: np.array(earned.errors(list(high[name].flat), list(low[name].flat)),
                             dtype=object).reshape(high[name].shape) for name in high}
    digits = min(earned.digits, dps)
    names = model.coordinate_names()
    return HeterogeneousTransient(
        times=times, x=high["x"], V=high.get("V"), W=high.get("W"), states=names,
        notes=[f"Gragg-Bulirsch-Stoer extrapolation on fixed-point numbers at {earned.wp_low} "
               f"and {earned.wp_high} digits (local tolerances 10^-{earned.wp_low - TOL_GAP} "
               f"and 10^-{earned.wp_high - TOL_GAP}); they agree on {digits} significant "
               "digits (norm-wise for each of x, V, W at each time).",
               f"heterogeneous population of K = {model.K} objects: E[X] = x + V/K + O(1/K^2)"],
        order=order, route="mpmath", dps=dps, digits=digits, model=model.name, params=inputs,
        free=names, integrator="extrapolation", errors=errors,
    )


@limited_blas()
def transient_heterogeneous(model: HeterogeneousModel, params: Mapping[str, Any] | None, *,
                            times: np.ndarray, start: Any, order: int, dps: int | None,
                            integrator: str, rtol: float, atol: float) -> Any:
    """``x(t)``, ``V(t)``, ``W(t)`` on the ``K x S`` coordinates
    (:mod:`numeric.heterogeneous.transient`): float64 (``dps=None``, digits from two
    tolerances) or at ``dps`` digits (:func:`transient_dps`)."""
    from numeric.heterogeneous.entry import rates, start_point
    from numeric.heterogeneous.transient import agreement64, integrate64

    if order == 2:
        raise ParameterError(NO_ORDER_2)
    x0 = start_point(model, start)
    names = model.coordinate_names()
    K = model.K
    if dps is not None:
        return replace(transient_dps(model, params, x0, times, dps, order), start=start)
    with mpmath.workdps(30):
        R, inputs = rates(model, params, float64=True)
    integrator = "LSODA" if integrator == "auto" else integrator
    x, V, W = integrate64(R, x0, times, rtol, atol, integrator)
    x2, V2, _ = integrate64(R, x0, times, rtol / 100, atol / 100, integrator)
    digits = min(agreement64(x, x2), agreement64(V, V2))
    return TransientResult(
        times=times, x=x, V=V if order else None, W=W if order else None, states=names,
        notes=[f"float64 (solve_ivp, rtol {rtol:g} and {rtol / 100:g} agree to {digits} digits)",
               f"heterogeneous population of K = {K} objects: E[X] = x + V/K + O(1/K^2)"],
        order=order, route="float64", model=model.name, params=inputs, start=start, free=names,
        integrator=integrator, rtol=float(rtol),
    )


def trajectories(model: Any, params: Mapping[str, Any] | None, result: Any,
                 names: Sequence[str] | str | None) -> dict[str, Any]:
    """Each named observable along a heterogeneous transient (``result.x`` and
    ``result.V`` on the ``K x S`` coordinates): ``g0(t)`` and ``g1(t)`` of
    ``g0 + g1/K`` in float64, as
    :class:`numeric.expansion.transient_observables.ObservableTrajectory`."""
    from numeric.expansion.transient_observables import ObservableTrajectory
    from numeric.heterogeneous.observables import affine_parts, find

    out = {}
    for g in find(model, names):
        with mpmath.workdps(30):
            cn, kn, cd, kd = (np.asarray(v, dtype=float) for v in affine_parts(model, params, g))
        x = np.asarray(result.x, dtype=float)
        n0, d0 = x @ cn + kn, x @ cd + kd
        g0 = n0 / d0
        g1 = None
        if result.V is not None:
            V = np.asarray(result.V, dtype=float)
            g1 = (V @ cn - g0 * (V @ cd)) / d0
        out[g.name] = ObservableTrajectory(g.name, g.doc, np.asarray(result.times), g0, g1)
    return out
