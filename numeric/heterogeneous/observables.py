"""The declared observables of a heterogeneous population, on every kind of result.

An observable is ``E[n(X)] / E[d(X)]`` with ``n``, ``d`` affine
(:mod:`derive.heterogeneous_observables`).  On the steady state
(:class:`~numeric.heterogeneous.result.HeterogeneousSolution`) with
``E X = x* + V/K + O(1/K^2)``: ``E[n] = n(x*) + (c_n . V)/K`` and likewise for
``d``, so the ratio is ``g0 + g1/K + O(1/K^2)`` with ``g0 = n0/d0`` and
``g1 = (n1 - g0 d1)/d0``; every figure carries the error its inputs' errors
allow and prints only its earned digits.  On the exact law it is the ratio of
the exact means; on a simulation the ratio of the batch means with a
delta-method 95% interval over the batches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from mfstein.ground.errors import ParameterError


@dataclass
class ObservableValue:
    """One observable on one result: ``kind`` is ``"mean field"`` (``g0``, ``g1``,
    ``refined = g0 + g1/K`` as decimal strings of their earned digits),
    ``"exact"`` (``value``, float64) or ``"simulation"`` (``value`` and ``ci95``)."""

    #: The observable's declared name.
    name: str
    #: What it is, in one phrase (the declaration's ``doc``).
    doc: str
    #: The kind of result it was computed on, ``"mean field"``, ``"exact"`` or ``"simulation"``.
    kind: str
    #: The number of objects of the population.
    K: int
    #: ``E[n(X)] / E[d(X)]`` (float64), the ratio of the exact means, or of the batch means;
    #: ``None`` for ``"mean field"``.
    value: Any = None
    #: For ``"simulation"``, the 95% half-width of ``value`` (delta method, Student t over the
    #: batches); ``None`` otherwise.
    ci95: float | None = None
    #: For ``"mean field"``, ``g0 = n(x*) / d(x*)`` as a decimal string of its earned digits;
    #: ``None`` otherwise.
    g0: str | None = None
    #: For ``"mean field"``, the ``1/K`` coefficient ``g1 = (n1 - g0 d1) / d0`` as a decimal string
    #: of its earned digits; ``None`` otherwise.
    g1: str | None = None
    #: For ``"mean field"``, ``g0 + g1/K`` as a decimal string of its earned digits; ``None``
    #: otherwise.
    refined: str | None = None

    def text(self) -> str:
        """One line for the text output."""
        if self.kind == "mean field":
            return (f"{self.name} = {self.refined} (refined g0 + g1/K, K = {self.K}; "
                    f"mean field g0 = {self.g0}, g1 = {self.g1})")
        if self.kind == "simulation":
            return f"{self.name} = {self.value:.6g} +- {self.ci95:.2g} (95% CI)"
        return f"{self.name} = {self.value:.10g}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        out: dict[str, Any] = {"doc": self.doc, "kind": self.kind}
        if self.kind == "mean field":
            out.update(g0=self.g0, g1=self.g1, refined=self.refined)
        else:
            out["value"] = float(self.value)
            if self.ci95 is not None:
                out["ci95"] = float(self.ci95)
        return out


def find(model: Any, names: Sequence[str] | str | None) -> list[Any]:
    """The declared observables named ``names`` (one sentence for an unknown one)."""
    if names is None:
        return []
    names = [names] if isinstance(names, str) else list(names)
    declared = {g.name: g for g in model.observables}
    out = []
    for n in names:
        key = str(n).strip()
        if key not in declared:
            known = ", ".join(declared) or "none"
            raise ParameterError(
                f"observable {key!r} is not declared by the heterogeneous population "
                f"{model.name}; it declares: {known}."
            )
        out.append(declared[key])
    return out


def _affine(part: Any, n: int, values: Mapping[str, Any]) -> tuple[np.ndarray, Any]:
    """The coefficient vector (``mpf``) and constant of an affine part at ``values``."""
    import sympy as sp

    subs = {sp.Symbol(k): sp.Float(mpmath.mpf(v), mpmath.mp.dps + 5) for k, v in values.items()}
    vec = np.empty(n, dtype=object)
    vec[:] = mpmath.mpf(0)
    if part is None:
        return vec, mpmath.mpf(1)
    for i, c in part.coefficients:
        vec[i] = mpmath.mpf(sp.N(sp.sympify(c).xreplace(subs), mpmath.mp.dps + 5))
    return vec, mpmath.mpf(sp.N(sp.sympify(part.constant).xreplace(subs), mpmath.mp.dps + 5))


def affine_parts(model: Any, params: Mapping[str, Any] | None, g: Any) -> tuple:
    from numeric.params import check_names, parse_params

    values = parse_params(model, check_names(model, params))
    n = model.K * model.S
    return (*_affine(g.numerator, n, values), *_affine(g.denominator, n, values))


def _ratio(n0: Any, d0: Any, name: str) -> Any:
    if d0 == 0:
        raise ParameterError(f"observable {name} has a zero denominator at these parameters.")
    return n0 / d0


def observe(model: Any, params: Mapping[str, Any] | None, result: Any,
            names: Sequence[str] | str | None) -> dict[str, ObservableValue]:
    """Each named observable of ``model`` on ``result`` (a heterogeneous steady state,
    exact law or simulation of ``model`` at ``params``)."""
    from numeric.heterogeneous.result import HeterogeneousExact, HeterogeneousSolution

    out = {}
    for g in find(model, names):
        with mpmath.workdps(getattr(result, "dps", 15) + 20):
            cn, kn, cd, kd = affine_parts(model, params, g)
            if isinstance(result, HeterogeneousSolution):
                out[g.name] = _on_solution(g, result, cn, kn, cd, kd)
                continue
            if isinstance(result, HeterogeneousExact):
                mean = [mpmath.mpf(float(v)) for v in result.mean]
                value = _ratio(np.dot(cn, mean) + kn, np.dot(cd, mean) + kd, g.name)
                out[g.name] = ObservableValue(g.name, g.doc, "exact", model.K, float(value))
                continue
            out[g.name] = _on_batches(g, result, cn, kn, cd, kd, model.K)
    return out


def _on_solution(g: Any, sol: Any, cn: np.ndarray, kn: Any, cd: np.ndarray, kd: Any
                 ) -> ObservableValue:
    from numeric.precision import format_entries

    x = [mpmath.mpf(v) for v in sol.s_star]
    V = [mpmath.mpf(v) for v in sol.V]
    ex = [abs(mpmath.mpf(e)) for e in sol.errors["s_star"]]
    ev = [abs(mpmath.mpf(e)) for e in sol.errors["V"]]
    an, ad = [abs(c) for c in cn], [abs(c) for c in cd]
    n0, d0 = np.dot(cn, x) + kn, np.dot(cd, x) + kd
    n1, d1 = np.dot(cn, V), np.dot(cd, V)
    e_n0, e_d0 = np.dot(an, ex), np.dot(ad, ex)
    e_n1, e_d1 = np.dot(an, ev), np.dot(ad, ev)
    g0 = _ratio(n0, d0, g.name)
    g1 = (n1 - g0 * d1) / d0
    e_g0 = (e_n0 + abs(g0) * e_d0) / abs(d0)
    e_g1 = (e_n1 + abs(g0) * e_d1 + abs(d1) * e_g0 + abs(g1) * e_d0) / abs(d0)
    K = sol.K
    texts, _ = format_entries([g0, g1, g0 + g1 / K], [e_g0, e_g1, e_g0 + e_g1 / K], sol.digits)
    return ObservableValue(g.name, g.doc, "mean field", K, g0=texts[0], g1=texts[1],
                           refined=texts[2])


def _on_batches(g: Any, r: Any, cn: np.ndarray, kn: Any, cd: np.ndarray, kd: Any,
                K: int) -> ObservableValue:
    """Ratio of the batch means with a delta-method interval (Student t over batches)."""
    from scipy.stats import t as student

    bm = np.asarray(r.batch_means, dtype=float)
    nb = bm @ cn.astype(float) + float(kn)
    db = bm @ cd.astype(float) + float(kd)
    value = float(_ratio(nb.mean(), db.mean(), g.name))
    resid = nb - value * db
    m = len(nb)
    half = float(student.ppf(0.975, m - 1) * resid.std(ddof=1) / np.sqrt(m) / abs(db.mean()))
    return ObservableValue(g.name, g.doc, "simulation", K, value, half)
