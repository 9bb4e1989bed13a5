"""JSQ(L) with arrival rate alpha and service rate beta (Graham's network).

N single-server queues with infinite buffers; customers arrive at rate
``N alpha``, each is allocated ``L`` distinct queues uniformly at random and
joins the shortest (ties uniform); servers work at rate ``beta``.  The state
``u(k)`` is the fraction of queues with at least ``k`` customers, and the
mean-field drift is

    du(k)/dt = alpha (u(k-1)^L - u(k)^L) - beta (u(k) - u(k+1)),

with the fixed point ``u(k) = rho^((L^k - 1)/(L - 1))`` (``rho^k`` for L = 1),
``rho = alpha/beta < 1`` ("Functional central limit theorems for a large
network in which customers join the shortest of several queues", C. Graham).
The supermarket model of "Beyond Scaling" is the case ``alpha = lam``,
``beta = 1``, ``L = d``.

Infinite buffers (``b = "inf"``) are truncated automatically where ``u(k)``
falls below the requested precision (:class:`derive.spec.Truncated`); a finite
``b`` gives the model with buffer ``b``.  ``distinct=True`` samples the ``L``
queues without replacement as the paper does, which makes the rates depend on
``N`` (the N -> infinity mean field is the same).
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from derive.models.open_buffers import open_buffer, open_family
from derive.models.supermarket import SOURCE_DIGEST, SupermarketModel, queue_model
from mfstein.ground.errors import ParameterError, check_bool, check_int

ALPHA = sp.Symbol("alpha")
BETA = sp.Symbol("beta")
CITATION = (
    "C. Graham, Functional central limit theorems for a large network in which "
    "customers join the shortest of several queues"
)

def _finite(L: int, b: int, distinct: bool) -> SupermarketModel:
    name = "jsq_L-distinct" if distinct else "jsq_L"
    return queue_model(
        name, b, L, ALPHA, BETA, not distinct, key=(name, b, L, SOURCE_DIGEST), citation=CITATION
    )


def jsq_L(L: int = 2, b: int | str = "inf", *, distinct: bool = False) -> Any:
    """JSQ(L): ``L`` choices, arrival rate ``alpha``, service rate ``beta``.

    Parameters
    ----------
    L:
        Queues sampled per arrival, ``L >= 1`` (``L = 1``: independent M/M/1 queues).
    b:
        Buffer size ``>= 1``, or ``"inf"`` for infinite buffers truncated where
        ``u(k) < 10^-(digits + 10)`` once ``alpha``, ``beta`` and the precision
        are known, or ``"auto"``, the smallest buffer at which the constant stops
        changing at the requested digits (both need ``alpha < beta``;
        :mod:`derive.models.open_buffers`).
    distinct:
        Sample ``L`` distinct queues (rates depend on ``N``, a parameter).

    Returns
    -------
    SupermarketModel or derive.spec.Truncated
        Free parameters ``alpha > 0``, ``beta > 0`` (and ``N >= L`` if distinct).
    """
    L = check_int("L", L, 1)
    distinct = check_bool("distinct", distinct)
    kind = open_buffer(b)
    if kind is not None:
        if distinct:
            raise ParameterError(
                f"b must be a finite integer >= 1 when distinct is True (the N-dependent "
                f"rates have no b = {kind})."
            )
        build = lambda n: _finite(L, n, False)  # noqa: E731
        return open_family(kind, "jsq_L", build, L, ALPHA, BETA, _finite(L, 1, False).info)
    try:
        b = check_int("b", b, 1)
    except ParameterError:
        raise ParameterError(f"b must be an integer >= 1, auto or inf, got {b!r}.") from None
    return _finite(L, b, distinct)
