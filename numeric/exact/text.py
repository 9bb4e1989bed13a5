"""The text form of an exact finite-N result: what ``mfstein exact`` prints.

:func:`exact_text` writes a :class:`numeric.exact.result.ExactResult` as a heading
(the model, ``N``, the parameters, the linear solve and its residual ``||pi Q||_1``),
a table per coordinate ``k`` of the mean-field fixed point ``s*_k``, the exact
``E[S_k]``, the bias ``N(E[S_k] - s*_k)``, the refined bias ``V_k`` and ``N Var(S_k)``
beside the Ornstein--Uhlenbeck ``W_kk`` (core paper, Theorem 1: ``N(E[S] - s*) -> V``,
``N Cov(S) -> W``), then ``N E||S - s*||^2`` beside ``c = tr(W)``, the queueing
numbers of a monotone model and the observables' exact expectations
(:func:`expectations_text`).  Asked for, a result of a family's short form (one that
carries ``family_fields``, as :func:`numeric.exact.solve_exact` returns) is written in
the short form's own layout, its heading read from those fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mfstein.ground.errors import ParameterError


def exact_text(r: Any, *, short_form: bool = False) -> str:
    """The text of ``r`` (``mfstein exact``'s output): the model's layout, or with
    ``short_form`` the family's short form layout (``mfstein exact --N --lam --b``),
    its heading read from ``r.family_fields``; then the observables, if any."""
    if short_form and not r.family_fields:
        raise ParameterError(
            "short_form needs a result of a family's short form (one with family_fields, "
            "as numeric.exact.solve_exact returns)."
        )
    text = _short_form_text(r) if short_form else _model_text(r)
    if r.observables:
        text += "\n" + expectations_text(r.observables)
    return text


def _family(r: Any) -> str:
    """The family's name: the ``info.fast_path`` the solved model declares (the
    result's ``model`` when the model is not at hand)."""
    info = getattr(r.source_model, "info", None)
    return getattr(info, "fast_path", None) or r.model


def _short_form_text(r: Any) -> str:
    """The short form's report: ``s*``, ``E[S]``, the bias and ``N Var`` per level,
    ``N E||S - s*||^2``, the blocking probability, the mean number of jobs and the
    queue-length law."""
    sampling = "with" if r.replacement else "without"
    out = [
        f"exact finite-N {_family(r)} model: N = {r.N}, lam = {r.lam}, b = {r.n}, d = {r.d} "
        f"(sampling {sampling} replacement)",
        f"states {r.states:,}   solver {r.solver} ({r.iterations} iterations)   "
        f"residual ||pi Q||_1 = {r.residual:.2e}   {r.seconds:.2f} s",
        "",
        f"{'k':>3} {'s*_k':>12} {'E[S_k]':>12} {'N(E[S_k]-s*_k)':>16} {'N Var(S_k)':>12}",
    ]
    for k in range(r.n):
        out.append(
            f"{k + 1:>3} {r.s_star[k]:>12.6g} {r.mean[k]:>12.6g} {r.n_bias[k]:>16.6g} "
            f"{r.n_cov[k, k]:>12.6g}"
        )
    out += [
        "",
        f"N E||S - s*||^2       = {r.printed('n_mse')!r}",
        f"blocking probability  = {r.printed('blocking')!r}",
        f"mean jobs per server  = {r.printed('mean_jobs')!r}",
        _pmf_line(r.queue_length_pmf),
    ]
    return "\n".join(out)


def _pmf_line(pmf: Any) -> str:
    """``P(queue length = k)   = 0: ..., 1: ...`` (4 significant digits each)."""
    return "P(queue length = k)   = " + ", ".join(f"{k}: {v:.4g}" for k, v in enumerate(pmf))


def _model_text(r: Any) -> str:
    """The report of any model's result: the table with ``V_k`` and ``W_kk``, the
    start and its conserved values, the queueing numbers when defined, the notes."""
    pv = ", ".join(f"{k} = {v}" for k, v in r.params.items())
    out = [
        f"exact finite-N {r.model} model: N = {r.N}" + (f", {pv}" if pv else ""),
        f"states {r.states:,}   solver {r.solver} ({r.iterations} iterations)   "
        f"||pi Q||_1 / max q = {r.relative_residual:.1e} (tolerance {r.tolerance:.0e})   "
        f"{r.seconds:.2f} s",
        f"start n = {tuple(r.start)}"
        + (f", conserved c.n = {r.law_values}" if r.law_values else ""),
        "",
        f"{'k':>3} {'s*_k':>12} {'E[S_k]':>12} {'N(E[S_k]-s*_k)':>16} {'V_k':>12} "
        f"{'N Var(S_k)':>12} {'W_kk':>12}",
    ]
    for k in range(r.n):
        out.append(
            f"{k + 1:>3} {r.s_star[k]:>12.6g} {r.mean[k]:>12.6g} {r.n_bias[k]:>16.6g} "
            f"{r.V[k]:>12.6g} {r.n_cov[k, k]:>12.6g} {r.W[k, k]:>12.6g}"
        )
    mse = f"{r.printed('n_mse')!r}   (mean field c = {r.constant:.10g})"
    out += ["", f"N E||S - s*||^2       = {mse}"]
    if r.blocking is not None:
        out.append(f"blocking probability  = {r.printed('blocking')!r}")
    if r.mean_jobs is not None:
        out.append(f"mean jobs per server  = {r.printed('mean_jobs')!r}")
    if r.queue_length_pmf is not None:
        out.append(_pmf_line(r.queue_length_pmf))
    out += [f"note: {n}" for n in r.notes]
    return "\n".join(out)


def expectations_text(values: Mapping[str, Any]) -> str:
    """Lines ``E[g] = mean (digits)   N Var = ...`` of each observable under the exact
    law (:class:`numeric.meanfield.observables.ExactExpectation`: the mean with only
    the digits its error bound earns, a dash and the bound when none), after a blank
    line."""
    out = [""]
    width = max(len(name) for name in values)
    for name, e in values.items():
        text = e.text()
        mean = (
            f"{text} ({e.digits} digits)" if text else f"- (|mean| <= {abs(e.mean) + e.error:.2g})"
        )
        out.append(f"E[{name}]{' ' * (width - len(name))} = {mean}   N Var = {e.n_variance:.6g}")
    return "\n".join(out)
