"""The text form of the Persistent-Idle results (``mfstein pi``): the heading both
share and the exact chain's report (:meth:`numeric.pi.exact.PIExactResult.to_text`;
the simulation's is :meth:`sim.pi.PIResult.to_text`)."""

from __future__ import annotations

from typing import Any


def heading(model: Any, policy: str) -> str:
    """``n = .., policy = .., E[a] = .., sum E[s_i] = .., load = ..``: the model's
    batch mean, the servers' total capacity and the load ``E[a] / sum E[s_i]``."""
    return (
        f"n = {model.n}, policy = {policy}, E[a] = {model.mean_arrival:.6g}, "
        f"sum E[s_i] = {model.capacity:.6g}, load = {model.load:.6g}"
    )


def exact_text(e: Any) -> str:
    """The exact truncated chain's report: the heading, the chain (cap, truncated mass,
    states, solver, residual), ``E[Q_i]`` and ``P(idle)`` per server and the totals."""
    out = [
        heading(e.model, e.policy),
        f"exact truncated chain: cap {e.cap} (truncated mass {e.truncated_mass:.2e} per slot), "
        f"{e.states:,} states, {e.solver}, residual ||pi (P - I)||_1 = {e.residual:.1e}",
        f"{'server':>6} {'E[Q_i]':>14} {'P(idle)':>12}",
    ]
    for i in range(e.model.n):
        out.append(f"{i + 1:>6} {e.mean_queue[i]:>14.8f} {e.p_idle[i]:>12.8f}")
    out += [
        f"E[Q_total]        = {e.mean_total:.10g}",
        f"mean delay (slots)= {e.delay:.10g}",
        f"messages / job    = {e.messages_per_job:.10g}",
        f"messages / batch  = {e.messages_per_batch:.10g}",
    ]
    return "\n".join(out)
