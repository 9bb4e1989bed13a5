"""M/M/n and M/M/1 in closed form: the comparison systems for JSQ.

The model of "Exponential Tail Bounds on Queues: A Confluence of Non-Asymptotic
Heavy Traffic and Large Deviations" (Jhunjhunwala, Hurtado-Lange, Maguluri):
Poisson arrivals at rate ``lambda_n = n mu (1 - eps)``, ``mu = 1``, load
``rho = 1 - eps``.  ``qbar`` is the number of jobs in the system.

M/M/n (one queue, ``n`` servers), offered load ``a = n rho``:

.. math::

    P(\\bar q = k) = p_0 a^k / k!  \\ (k < n), \\qquad
    P(\\bar q = k) = C(n, a) (1 - \\rho) \\rho^{k - n} \\ (k \\ge n),

with the Erlang C probability of waiting
``C(n, a) = B / (1 - rho (1 - B))`` and the Erlang B loss probability
``B = P(Pois(a) = n) / P(Pois(a) <= n)``.  The head is the Poisson pmf
renormalised to mass ``1 - C``.

M/M/1 at rate ``n`` (the "resource-pooled" single server of the paper's
comparison): ``P(qbar = k) = (1 - rho) rho^k``.

Accuracy: SciPy's Poisson pmf/cdf are accurate to a few ulps in relative
terms, so every probability here has relative error ~1e-14; the law's total
mass is checked against 1 (``NumericalError`` beyond ``1e-12``).
"""

from __future__ import annotations

import numpy as np

from mfstein.ground.errors import NumericalError
from numeric.tails.statistics import TotalQueueLaw, geometric_law

__all__ = ["erlang_c", "mm1_law", "mmn_law"]


def erlang_c(n: int, a: float) -> float:
    """Erlang C: probability that an arrival waits in M/M/n with offered load ``a < n``."""
    from scipy import stats

    B = float(stats.poisson.pmf(n, a) / stats.poisson.cdf(n, a))
    rho = a / n
    return B / (1.0 - rho * (1.0 - B))


def mmn_law(n: int, eps: float) -> TotalQueueLaw:
    r"""Stationary law of the number of jobs in M/M/n with ``lambda = n (1 - eps)``, ``mu = 1``.

    The head is :math:`p_0, \dots, p_n` and the tail
    :math:`p_{n+i} = p_n \rho^i`, :math:`\rho = 1 - \varepsilon` (exactly
    geometric: all servers are busy from ``n`` jobs on).

    Raises
    ------
    NumericalError
        If the computed law's mass differs from 1 by more than ``1e-12``.
    """
    from scipy import stats

    from mfstein.ground.limits import check_memory

    # the head p_0..p_n and SciPy's temporaries: about eight float64 arrays of n + 1
    check_memory(f"the M/M/n law of n = {n:,} servers", 64 * (n + 1))
    rho = 1.0 - eps
    a = n * rho
    C = erlang_c(n, a)
    k = np.arange(n)
    head = np.empty(n + 1)
    head[:n] = (1.0 - C) * stats.poisson.pmf(k, a) / stats.poisson.cdf(n - 1, a)
    head[n] = C * (1.0 - rho)
    law = TotalQueueLaw(head, np.array([head[n]]), np.array([rho]))
    err = abs(law.total_mass() - 1.0)
    if not err <= 1e-12:
        raise NumericalError(
            f"M/M/n law for n = {n}, eps = {eps}: mass residual {err:.2e} > 1e-12."
        )
    return law


def mm1_law(n: int, eps: float) -> TotalQueueLaw:
    """M/M/1 with arrival rate ``n (1 - eps)`` and service rate ``n``: geometric(``1 - eps``)."""
    return geometric_law(1.0 - eps)
