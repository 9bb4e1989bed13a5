"""Power-of-d (JSQ(d)) with K servers of their own speeds, for any d >= 2.

K single-server queues with buffer ``b`` (server ``k`` holds ``0..b`` jobs,
``S = b + 1`` states) serving at their own rates ``mu_k``.  Jobs arrive at rate
``lam K``; each samples ``d`` distinct servers uniformly at random and joins a
shortest of them, ties broken uniformly among the sampled queues of that length,
and is lost when all ``d`` are full.  This is JSQ(d), the randomized
join-the-shortest-queue scheme of A. Mukhopadhyay and R. R. Mazumdar, "Analysis
of randomized join-the-shortest-queue (JSQ) schemes in large heterogeneous
processor-sharing systems", IEEE Transactions on Control of Network Systems 3(2),
2016, with FIFO servers; its refined mean field is that of S. Allmeier and
N. Gast, "Mean field and refined mean field approximations for heterogeneous
systems: it works!", SIGMETRICS 2022, with the rates written as functions of the
occupancy averages (:mod:`numeric.heterogeneous.averaged`).

The arrival rate to server ``k`` with ``s < b`` jobs (derived here).  Among the
``K - 1`` other servers let ``n_a`` hold exactly ``s`` jobs and ``n_b`` more than
``s``.  Server ``k`` is among the ``d`` sampled with probability ``d/K``; the
other ``d - 1`` are then a uniform subset of the ``K - 1`` others, and ``k``
receives the job when none of them is shorter, with probability ``1/(j+1)`` when
``j`` of them tie with it.  So the rate is

    lam K (d/K) sum_{j=0}^{d-1} C(n_a, j) C(n_b, d-1-j) / ((j+1) C(K-1, d-1)),

a polynomial in the others' averages ``others[s] = n_a/(K-1)`` and
``sum_{u>s} others[u] = n_b/(K-1)`` (``C(n, j) = n(n-1)...(n-j+1)/j!``): the
finite-K chain is exactly this policy.  As ``K -> infinity`` it tends to
``lam ((a + c)^d - c^d) / a`` with ``a`` the fraction at ``s`` and ``c`` the fraction
above (the d choices become independent).  For ``d = 2`` it is
``lam (others[s] + 2 sum_{u>s} others[u])``, the pairwise rates of
:func:`derive.models.heterogeneous_servers.power_of_two_heterogeneous`: both give
the same chain and the same numbers.  A departure from server ``k`` has rate
``mu_k``.

``sampling="replacement"``: the ``d`` servers are drawn with replacement among
all K (server ``k`` included), ties broken uniformly among the sampled slots of
the shortest length.  By symmetry among the ``K mean[s]`` servers with ``s`` jobs,
each receives ``1/(K mean[s])`` of the jobs whose shortest sample has ``s`` jobs,
which happens with probability ``(a + c)^d - c^d`` (``a = mean[s]``, ``c =
sum_{u>s} mean[u]``): the rate is ``lam ((a + c)^d - c^d)/a = lam sum_{i=1}^{d}
C(d, i) a^(i-1) c^(d-i)``, exactly, at every K (the supermarket model's sampling).

The mean field of the finite-K rates (``sampling="distinct"``) is a polynomial
in the expected averages whose falling factorials can be negative between the
integers: for very small K (``K = d``) the mean-field ODE from an empty system
may leave the simplex by a little before it settles; the fixed points we
checked (K from 5 to 50) stay inside.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp

from derive.heterogeneous_population import (
    MAX_OBJECTS,
    HeterogeneousModel,
    heterogeneous,
    occupancy,
)
from derive.model import LAM
from derive.models.heterogeneous_servers import CITATION, queue_observables, speeds_of
from derive.spec import Parameter
from mfstein.ground.errors import ParameterError, check_int


def _choose(n: sp.Expr, j: int) -> sp.Expr:
    """``C(n, j)`` as a polynomial in ``n``."""
    return sp.Mul(*[n - i for i in range(j)]) / sp.factorial(j)


def arrival_rate_with_replacement(d: int, s: int, mean: Sequence[sp.Symbol]) -> sp.Expr:
    """The rate at which server ``k`` with ``s`` jobs receives a job when the ``d``
    servers are drawn with replacement (module text), a polynomial in ``mean``."""
    a, c = mean[s], sp.Add(*mean[s + 1:])
    return sp.expand(LAM * sp.Add(*[sp.binomial(d, i) * a ** (i - 1) * c ** (d - i)
                                    for i in range(1, d + 1)]))


def arrival_rate(K: int, d: int, s: int, others: Sequence[sp.Symbol]) -> sp.Expr:
    """The rate at which server ``k`` with ``s`` jobs receives a job (module text), as a
    polynomial in the others' averages ``others``."""
    n_a = (K - 1) * others[s]
    n_b = (K - 1) * sp.Add(*others[s + 1:])
    total = sp.Add(*[_choose(n_a, j) * _choose(n_b, d - 1 - j) / (j + 1) for j in range(d)])
    return sp.expand(LAM * d * total / sp.binomial(K - 1, d - 1))


def _classes(K: int, speeds: Any, classes: Sequence[Any] | str) -> list[Any]:
    """The K speeds of ``speed_classes``: each of its ``C`` values repeated ``K/C`` times."""
    if speeds is not None:
        raise ParameterError("give speeds or speed_classes, not both.")
    items = classes.replace(",", " ").split() if isinstance(classes, str) else list(classes)
    if not items or K % len(items):
        raise ParameterError(
            f"speed_classes must hold C >= 1 speeds with C dividing K = {K}, got {len(items)}."
        )
    return [v for v in items for _ in range(K // len(items))]


def power_of_d_heterogeneous(
    K: int = 10, b: int = 2, d: int = 2, speeds: Sequence[Any] | str | None = None,
    sampling: str = "distinct", speed_classes: Sequence[Any] | str | None = None,
) -> HeterogeneousModel:
    """``K >= d`` servers with buffer ``b >= 1``, ``d >= 2`` choices and service
    rates ``speeds`` (K numbers > 0, a list or a comma-separated string; default
    evenly spread over ``[1/2, 3/2]``; two classes: two distinct values);
    ``sampling`` ``distinct`` (``d`` distinct servers, default) or ``replacement``;
    ``speed_classes`` ``C`` speeds instead of ``speeds``: the K servers in ``C``
    consecutive classes of ``K/C`` servers each (K a multiple of C; e.g. ``1,2``:
    two classes, which keeps its meaning as K varies); parameter ``lam > 0``, the
    arrival rate per server.  This is JSQ(d)."""
    K = check_int("K", K, 2, MAX_OBJECTS)
    b = check_int("b", b, 1, 50)
    d = check_int("d", d, 2, 20)
    sampling = str(sampling).strip().lower()
    if sampling not in ("distinct", "replacement"):
        raise ParameterError(f"sampling must be distinct or replacement, got {sampling!r}.")
    if d > K and sampling == "distinct":
        raise ParameterError(
            f"d must be at most K = {K} (d distinct servers are sampled), got {d}."
        )
    mu = speeds_of(K, speeds if speed_classes is None else _classes(K, speeds, speed_classes))
    S = b + 1
    mean, others = occupancy(S)
    A = np.zeros((K, S, S), dtype=object)
    if sampling == "distinct":
        up = [arrival_rate(K, d, s, others) for s in range(b)]
    else:
        up = [arrival_rate_with_replacement(d, s, mean) for s in range(b)]
    for k in range(K):
        for s in range(b):
            A[k, s, s + 1] = up[s]
        for s in range(1, S):
            A[k, s, s - 1] = mu[k]
    return heterogeneous(
        A, parameters=(Parameter("lam", low=0, doc="arrival rate per server"),),
        name=f"power_of_d_heterogeneous(K={K}, b={b}, d={d}"
             + (", sampling=replacement)" if sampling == "replacement" else ")"),
        states=[str(s) for s in range(S)], citation=CITATION,
        observables=queue_observables(mu, b),
    )
