"""Observables estimated by the generic simulator, with batch-means 95% CIs.

The generic event loop (:mod:`sim.generic_kernels`) accumulates, per batch of
total time ``T_b``, the time integrals of the counts ``int n_k dt``, the
thinned second moments ``sum w n_j n_k`` (on a Bernoulli thinning of the
events, of thinned time ``t_b``) and, when the lattice is small enough, the
time spent at each value of each coordinate.  These are sufficient statistics
for every observable that is a sum of

* a constant, and terms linear in one coordinate (from ``int n_k dt``),
* products ``s_j s_k`` (from the second moments; an unbiased estimate of the
  time integral is ``T_b / t_b sum w n_j n_k``),
* any function of a single coordinate ``h(s_k)`` (from the time at each value:
  ``sum_j time(n_k = j) h(j/N)``, exact),

so ``E[g(S_N)]`` is estimated by the ratio estimator ``sum_b G_b / sum_b T_b``
of the per-batch time integrals ``G_b`` of ``g`` (:func:`sim.stats.ratio`) with
its batch-means 95% confidence interval.  Other observables (a product of a
non-polynomial function of one coordinate with another coordinate, a cubic
cross term) are refused with one sentence before any simulation runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from mfstein.errors import ParameterError


@dataclass(frozen=True)
class SimObservable:
    """An observable split into the pieces the simulator's statistics can integrate."""

    name: str
    expr: sp.Expr
    constant: float
    linear: tuple[tuple[int, float], ...]
    pairs: tuple[tuple[int, int, float], ...]
    single: tuple[tuple[int, Any], ...]  # (coordinate, numpy function of s_k)

    @property
    def needs_histograms(self) -> bool:
        return bool(self.single)


def prepare(model: Any, g: Any, params: Mapping[str, Any]) -> SimObservable:
    """Parse ``g`` against ``model`` and split it (one sentence if it cannot be
    estimated from the simulator's statistics)."""
    from derive.observables import observable

    obs = observable(model, g)
    if obs.quadratic:
        raise ParameterError(
            "the quadratic observable is estimated by the simulator's own n_mse; give an "
            "expression in the state instead."
        )
    values = {p: sp.Rational(str(params[str(p)])) for p in model.params if str(p) in params}
    missing = sorted(str(p) for p in obs.expr.free_symbols & set(model.params) if p not in values)
    if missing:
        raise ParameterError(f"observable {obs.name!r} needs parameter {', '.join(missing)}.")
    expr = sp.expand(obs.expr.subs(values))
    index = {s: k for k, s in enumerate(model.states)}
    constant = 0.0
    linear: dict[int, float] = {}
    pairs: dict[tuple[int, int], float] = {}
    single: dict[int, sp.Expr] = {}
    for term in sp.Add.make_args(expr):
        syms = sorted(index[s] for s in term.free_symbols if s in index)
        if not syms:
            constant += float(term)
            continue
        poly = term.as_poly(*[model.states[k] for k in syms]) if term.is_polynomial() else None
        if len(syms) == 1:
            k = syms[0]
            if poly is not None and poly.total_degree() <= 1:
                linear[k] = linear.get(k, 0.0) + float(poly.coeff_monomial(model.states[k]))
            else:
                single[k] = single.get(k, sp.Integer(0)) + term
            continue
        if len(syms) == 2 and poly is not None and poly.total_degree() == 2:
            j, k = syms
            coeff = float(poly.coeff_monomial(model.states[j] * model.states[k]))
            pairs[(j, k)] = pairs.get((j, k), 0.0) + coeff
            continue
        raise ParameterError(
            f"observable {obs.name!r} cannot be estimated by the simulator: its term {term} "
            "is neither a function of one coordinate nor a product of two coordinates."
        )
    funcs = tuple((k, _on_grid(model.states[k], e)) for k, e in sorted(single.items()))
    return SimObservable(
        name=obs.name,
        expr=obs.expr,
        constant=constant,
        linear=tuple(sorted(linear.items())),
        pairs=tuple((j, k, c) for (j, k), c in sorted(pairs.items())),
        single=funcs,
    )


def _on_grid(x: sp.Symbol, expr: sp.Expr) -> Any:
    """``expr``, a function of the coordinate ``x`` only, as a float64 function of
    an array of its values (the tree walked, not compiled: any length of sum)."""
    from derive.evaluation import numpy_arithmetic, walk

    arith = numpy_arithmetic(np.float64)
    return lambda grid: walk(expr, {x: np.asarray(grid, dtype=float)}, arith)


def estimate(
    observables: Sequence[SimObservable],
    batches: Sequence[Mapping[str, Any]],
    T: np.ndarray,
    thin_time: np.ndarray,
    N: int,
) -> dict[str, Any]:
    """Name -> :class:`sim.stats.Estimate` of ``E[g(S_N)]`` from the batches of
    :func:`sim.generic.advance` (``mean``: ``int n dt``; ``cov``: thinned
    ``sum w n_j n_k``; ``hist``: time at each value of each coordinate)."""
    from sim import stats

    out: dict[str, Any] = {}
    for o in observables:
        G = np.full(len(batches), o.constant) * T
        for k, a in o.linear:
            G = G + a * np.array([s["mean"][k] for s in batches]) / N
        for j, k, c in o.pairs:
            cov = np.array([s["cov"][j, k] for s in batches])
            G = G + c * cov * (T / np.maximum(thin_time, np.finfo(float).tiny)) / N**2
        for k, fn in o.single:
            hist = np.array([s["hist"][k] for s in batches])
            if hist.shape[1] == 0:
                raise ParameterError(
                    f"observable {o.name!r} needs the marginal histograms, which are not kept "
                    "for a lattice this large."
                )
            grid = np.arange(hist.shape[1]) / N
            with np.errstate(all="ignore"):
                h = np.broadcast_to(np.asarray(fn(grid), dtype=float), grid.shape)
            visited = hist > 0
            if not np.isfinite(h[visited.any(axis=0)]).all():
                raise ParameterError(
                    f"observable {o.name!r} is not a finite real number on every state the "
                    "simulation visited."
                )
            G = G + np.where(visited, hist * np.where(np.isfinite(h), h, 0.0), 0.0).sum(axis=1)
        out[o.name] = stats.ratio(G, T)
    return out
