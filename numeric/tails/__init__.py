"""Exact exponential-tail statistics of JSQ, M/M/n and the single-server queue.

After "Exponential Tail Bounds on Queues: A Confluence of Non-Asymptotic Heavy
Traffic and Large Deviations" (Jhunjhunwala, Hurtado-Lange, Maguluri): exact
stationary laws of the total queue length -- M/M/n in closed form
(:mod:`numeric.tails.mmn`), the discrete-time SSQ with bounded arrivals and
services by the roots method (:mod:`numeric.tails.ssq`), JSQ for small ``n`` by
a level-phase QBD (:mod:`numeric.tails.jsq_qbd`, :mod:`numeric.tails.qbd`) --
and, from them, ``P(eps qbar > x)``, ``E[eps qbar]``, the distance to the
exponential heavy-traffic limit, the exact tail decay rate and the moments of
the perpendicular component ``q_perp`` (:mod:`numeric.tails.statistics`,
:mod:`numeric.tails.report`).  Names are imported lazily.
"""

from __future__ import annotations

from mfstein.ground.lazy import lazy_package

__all__, __getattr__, __dir__ = lazy_package(
    __name__,
    {
        "numeric.tails.jsq_qbd": ("JSQSolution", "solve_jsq"),
        "numeric.tails.mmn": ("erlang_c", "mm1_law", "mmn_law"),
        "numeric.tails.qbd": ("solve_qbd",),
        "numeric.tails.report": ("TailReport", "exact_tails"),
        "numeric.tails.ssq": ("SSQSolution", "solve_ssq"),
        "numeric.tails.statistics": ("TotalQueueLaw", "geometric_law"),
    },
)
