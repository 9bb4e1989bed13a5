"""Power-of-two choices with K servers of K distinct speeds, object by object.

K single-server queues with buffer ``b`` (object ``k`` holds ``0..b`` jobs,
``S = b + 1`` states); server ``k`` serves at its own rate ``mu_k``.  Jobs
arrive at rate ``lam K``; each samples two distinct servers uniformly and joins
the shorter queue, ties broken uniformly, and is lost when both are full.  As a
heterogeneous population (:func:`derive.heterogeneous_population.heterogeneous`,
rmftool's ``HetPP`` conventions): ``A[k, s, s-1] = mu_k`` and, for the ordered
pair ``(k, k1)`` with ``k`` the queue joined,
``B[k, k1, s, s1, s+1, s1] = lam/(K-1)`` times 2 when ``s < s1`` and 1 when
``s = s1`` (an unordered pair is sampled at rate ``2 lam/(K-1)``).

The fully heterogeneous power-of-d system of A. Mukhopadhyay and
R. R. Mazumdar, "Analysis of randomized join-the-shortest-queue (JSQ) schemes in
large heterogeneous processor-sharing systems", IEEE Transactions on Control of
Network Systems 3(2), 2016, with d = 2 and FIFO servers; its refined mean field is
that of S. Allmeier and N. Gast, "Mean field and refined mean field approximations
for heterogeneous systems: it works!", SIGMETRICS 2022.  Per-server utilisation
is ``1 - P(queue k empty)``
(:meth:`numeric.heterogeneous.result.HeterogeneousSolution.utilisation`); the
declared observables (:func:`queue_observables`) are the mean number of jobs per
server, the utilisation overall and per class of speed, and the mean response
time by Little's law.  Any d: :mod:`derive.models.power_of_d_servers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp

from derive.heterogeneous_observables import HeterogeneousObservable, affine
from derive.heterogeneous_population import MAX_OBJECTS, HeterogeneousModel, heterogeneous
from derive.model import LAM
from derive.spec import Parameter
from mfstein.ground.errors import ParameterError, check_int
from mfstein.ground.numbers import parse_real

CITATION = (
    "A. Mukhopadhyay and R. R. Mazumdar, Analysis of randomized join-the-shortest-queue "
    "(JSQ) schemes in large heterogeneous processor-sharing systems, IEEE Trans. Control "
    "Netw. Syst. 3(2), 2016; S. Allmeier and N. Gast, Mean field and refined mean field "
    "approximations for heterogeneous systems: it works!, SIGMETRICS 2022"
)


def speeds_of(K: int, speeds: Sequence[Any] | str | None) -> list[sp.Rational]:
    """The ``K`` service rates: ``speeds`` checked (numbers > 0) or, by default, evenly
    spread over ``[1/2, 3/2]`` (mean 1)."""
    return _speeds(K, speeds)


def queue_observables(mu: Sequence[sp.Rational], b: int) -> list[HeterogeneousObservable]:
    """The observables of K queues with buffer ``b`` (state = queue length, ``S = b+1``)
    and service rates ``mu``:

    * ``jobs``: mean number of jobs per server, ``(1/K) sum_k E[Q_k]``;
    * ``utilisation``: mean fraction of busy servers, ``(1/K) sum_k P(Q_k > 0)``;
    * ``utilisation_class<c>``: the same over the servers of the ``c``-th smallest
      distinct speed (the per-class utilisation; one class per distinct speed);
    * ``response_time``: mean response time of an accepted job by Little's law,
      ``E[jobs] / E[throughput]`` with throughput ``(1/K) sum_k mu_k P(Q_k > 0)``
      (the rate of accepted jobs per server, equal to the arrival rate when no job
      is lost).
    """
    K, S = len(mu), b + 1
    jobs = affine({k * S + s: sp.Rational(s, K) for k in range(K) for s in range(1, S)})
    out = [
        HeterogeneousObservable("jobs", jobs, doc="mean number of jobs per server"),
        HeterogeneousObservable(
            "utilisation", affine({k * S: sp.Rational(-1, K) for k in range(K)}, 1),
            doc="mean fraction of busy servers",
        ),
    ]
    for c, speed in enumerate(sorted(set(mu))):
        members = [k for k in range(K) if mu[k] == speed]
        out.append(HeterogeneousObservable(
            f"utilisation_class{c}",
            affine({k * S: sp.Rational(-1, len(members)) for k in members}, 1),
            doc=f"fraction busy among the servers of speed {speed} ({len(members)} of K)",
        ))
    throughput = affine({k * S: -mu[k] / K for k in range(K)}, sp.Add(*mu) / K)
    out.append(HeterogeneousObservable(
        "response_time", jobs, throughput,
        doc="mean response time of an accepted job (Little's law: E[jobs]/E[throughput])",
    ))
    return out


def _speeds(K: int, speeds: Sequence[Any] | str | None) -> list[sp.Rational]:
    if speeds is None:  # evenly spread over [1/2, 3/2], mean 1
        return [sp.Rational(1, 2) + sp.Rational(k, K - 1) for k in range(K)]
    items = speeds.replace(",", " ").split() if isinstance(speeds, str) else list(speeds)
    if len(items) != K:
        raise ParameterError(f"speeds must hold K = {K} service rates, got {len(items)}.")
    out = []
    for v in items:
        f = parse_real("speeds", v, 0, None, low_open=True)
        out.append(sp.Rational(f.numerator, f.denominator))
    return out


def power_of_two_heterogeneous(
    K: int = 10, b: int = 2, speeds: Sequence[Any] | str | None = None
) -> HeterogeneousModel:
    """``K >= 2`` servers with buffer ``b >= 1`` and service rates ``speeds`` (K
    numbers > 0, a list or a comma-separated string; default evenly spread over
    ``[1/2, 3/2]``); parameter ``lam > 0``, the arrival rate per server."""
    K = check_int("K", K, 2, MAX_OBJECTS)
    b = check_int("b", b, 1, 50)
    mu = _speeds(K, speeds)
    S = b + 1
    A = np.zeros((K, S, S), dtype=object)
    for k in range(K):
        for s in range(1, S):
            A[k, s, s - 1] = mu[k]
    # every ordered pair has the same arrival pattern: one S^4 block broadcast
    block = np.zeros((S, S, S, S), dtype=object)
    for s in range(b):
        for s1 in range(s, S):
            block[s, s1, s + 1, s1] = LAM * (2 if s < s1 else 1) / (K - 1)
    B = np.zeros((K, K, S, S, S, S), dtype=object)
    off = ~np.eye(K, dtype=bool)
    B[off] = block
    return heterogeneous(
        A, B, parameters=(Parameter("lam", low=0),),
        name=f"power_of_two_heterogeneous(K={K}, b={b})",
        states=[str(s) for s in range(S)], citation=CITATION,
        observables=queue_observables(mu, b),
    )

