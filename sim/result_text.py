"""The text form of a simulation's result: what ``mfstein simulate`` prints.

:func:`simulation_text` writes a :class:`sim.base.SimulationResult` as its heading
(the model, ``N``, the parameters, the engine; the seed, the replications and the
batches of the batch-means estimates), then each estimate with its 95% confidence
interval (:mod:`sim.stats`): ``N E||S - s*||^2`` (core paper, Theorem 1), the queueing
numbers a monotone model has, per coordinate ``k`` the fixed point ``s*_k``, ``E[S_k]``,
``N(E[S_k] - s*_k)`` and ``N Var(S_k)``, the observables ``E[g(S_N)]`` and the speed.
Asked for, a result of a family's short form (one with ``family_fields``, as
:func:`sim.simulate_supermarket` returns) is written in the short form's own layout,
its heading read from those fields, with the queue-length law and the response time.
"""

from __future__ import annotations

from typing import Any

from mfstein.ground.display import estimate_text
from mfstein.ground.errors import ParameterError


def simulation_text(r: Any, *, short_form: bool = False) -> str:
    """The text of ``r`` (``mfstein simulate``'s output): the model's layout, or with
    ``short_form`` the family's short form layout (``mfstein simulate --N --lam --b``)."""
    if not short_form:
        return _model_text(r)
    if not r.family_fields:
        raise ParameterError(
            "short_form needs a result of a family's short form (one with family_fields, "
            "as sim.simulate_supermarket returns)."
        )
    return _short_form_text(r)


def _run_line(r: Any) -> str:
    """``seed = ..., R replications x S events (warm-up ..., B batches), 95% CIs``."""
    return (
        f"seed = {r.seed}, {r.reps} replications x {r.steps:.3g} events "
        f"(warm-up {r.warmup:.3g}, {r.batches} batches), 95% CIs"
    )


def _speed_line(r: Any) -> str:
    return f"{r.events:.3g} events, {r.events_per_second:.3g} events/s per core"


def _short_form_text(r: Any) -> str:
    """The short form's report: its heading from ``family_fields``, ``N E||S - s*||^2``,
    the blocking fraction, the mean jobs, per level ``E[S_k]``, the bias and the
    queue-length law, ``N Cov(S)``'s diagonal and the response time."""
    import numpy as np

    scheme = "with" if r.replacement else "without"
    lines = [
        f"N = {r.N}, lam = {r.lam_text}, b = {r.n}, d = {r.d} ({scheme} replacement), "
        f"policy = {r.policy} ({r.engine} simulator)",
        _run_line(r),
        f"N E||S - s*||^2 = {estimate_text(r.n_mse.mean, r.n_mse.ci95)}",
        f"blocking        = {estimate_text(r.blocking.mean, r.blocking.ci95)}",
        f"mean jobs/server= {estimate_text(r.mean_jobs.mean, r.mean_jobs.ci95)}",
        "k   E[S_k]               N(E[S_k] - s*_k)      P(queue = k)",
    ]
    pmf = r.queue_length_pmf
    lines.append(f"0   {'':20} {'':21} {estimate_text(pmf.mean[0], pmf.ci95[0])}")
    for k in range(r.n):
        lines.append(
            f"{k + 1:<3} {estimate_text(r.mean.mean[k], r.mean.ci95[k]):<20} "
            f"{estimate_text(r.n_bias.mean[k], r.n_bias.ci95[k]):<21} "
            f"{estimate_text(pmf.mean[k + 1], pmf.ci95[k + 1])}"
        )
    diag = np.diag(r.n_cov.mean)
    if np.isnan(diag).any():
        lines.append("diag N Cov(S) = not reported (run too short, see the warning)")
    else:
        lines.append("diag N Cov(S) = " + ", ".join(f"{x:.4f}" for x in diag))
    if r.response_time:
        from sim.stats import printed_response_time

        rt = printed_response_time(r.response_time)
        qs = ", ".join(f"q{float(k):g} = {v!r}" for k, v in rt["quantiles"].items())
        lines.append(f"response time = {estimate_text(rt['mean'], rt['ci95'])} ({qs})")
    lines.append(_speed_line(r))
    return "\n".join(lines)


def _model_text(r: Any) -> str:
    """Any model's report: the heading, ``N E||S - s*||^2``, the queueing numbers when
    defined, the table per coordinate (``N Var`` withheld when not estimated), the
    observables and the speed."""
    pv = ", ".join(f"{k} = {v}" for k, v in r.params.items())
    lines = [
        f"{r.model} model, N = {r.N}"
        + (f", {pv}" if pv else "")
        + f" ({r.engine} simulator{f', {r.loop} loop' if r.loop else ''})",
        _run_line(r),
        f"N E||S - s*||^2 = {estimate_text(r.n_mse.mean, r.n_mse.ci95)}",
    ]
    if r.blocking is not None:
        lines.append(f"blocking        = {estimate_text(r.blocking.mean, r.blocking.ci95)}")
    if r.mean_jobs is not None:
        lines.append(f"mean jobs/server= {estimate_text(r.mean_jobs.mean, r.mean_jobs.ci95)}")
    lines.append("k   s*_k       E[S_k]                N(E[S_k] - s*_k)     N Var(S_k)")
    for k in range(r.n):
        lines.append(
            f"{k + 1:<3} {r.s_star[k]:<10.6f} {estimate_text(r.mean.mean[k], r.mean.ci95[k]):<21} "
            f"{estimate_text(r.n_bias.mean[k], r.n_bias.ci95[k]):<20} "
            + (
                "not reported"
                if r.n_cov.mean[k, k] != r.n_cov.mean[k, k]  # NaN: withheld
                else estimate_text(r.n_cov.mean[k, k], r.n_cov.ci95[k, k])
            )
        )
    width = max((len(name) for name in r.observables), default=0)
    for name, e in r.observables.items():  # E[g(S_N)] with its 95% CI
        lines.append(f"E[{name}]{' ' * (width - len(name))} = {e.text()}")
    lines.append(_speed_line(r))
    return "\n".join(lines)
