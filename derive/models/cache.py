"""A cache of ``m`` items out of ``n`` under RANDOM replacement, as a population model.

The model of N. Gast and B. Van Houdt, "Transient and steady-state regime of a
family of list-based cache replacement algorithms" (ACM SIGMETRICS 2015; the
single-list case of RAND(m)), in the form in which N. Gast's reference tool
rmf_tool ships it (``tests/test_cache.py``) and the refined mean-field paper
(N. Gast and B. Van Houdt, "A Refined Mean Field Approximation", Proc. ACM
Meas. Anal. Comput. Syst. 1(2), 2017) analyses it.  Requests follow the
independent reference model with Zipf popularities ``p_i = i^-alpha / sum_j
j^-alpha``; in the N-th system every item has N copies and the cache holds
``m N`` of them.

State: ``o_i`` (the fraction of copies of item ``i`` outside the cache) and
``c_i`` (inside), ``i = 1..n``, with the conservation laws ``o_i + c_i = 1`` and
``sum_i c_i = m``.  Transition ``(i, j)``, ``i != j``: a request for an absent
copy of ``i`` (rate ``p_i o_i``) evicts a uniformly chosen cached copy, one of
item ``j`` with probability ``c_j / m``; jump ``-e(o_i) + e(c_i) + e(o_j) -
e(c_j)`` at intensity ``p_i o_i c_j / m``.

Observables: ``hit_rate = sum_i p_i c_i`` (probability that a request finds its
item in the cache), ``hit_i = c_i``, ``miss_rate = 1 - hit_rate``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import sympy as sp

from derive.model import Model, Transition
from derive.spec import ModelInfo, StateSpace
from mfstein.ground.errors import ParameterError, check_int

CITATION = (
    "N. Gast and B. Van Houdt, Transient and steady-state regime of a family of list-based "
    "cache replacement algorithms, ACM SIGMETRICS 2015 (as shipped by rmf_tool)"
)
_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def zipf(n: int, alpha: sp.Expr, digits: int = 40) -> list[sp.Rational]:
    """Zipf popularities ``i^-alpha / sum_j j^-alpha`` as exact rationals rounded
    to ``digits`` significant digits (they enter the kernels as constants)."""
    w = [sp.Integer(i) ** (-alpha) for i in range(1, n + 1)]
    total = sp.Add(*w)
    return [sp.Rational(str(sp.N(x / total, digits))) for x in w]


def cache_random(n: int = 10, m: int = 5, alpha: object = "0.5") -> Model:
    """The RANDOM-replacement cache: ``n >= 2`` items, cache size ``1 <= m < n``,
    Zipf exponent ``alpha >= 0`` (a number; kept exact).  No free parameters."""
    n = check_int("n", n, 2)
    m = check_int("m", m, 1)
    if m >= n:
        raise ParameterError(f"m must be smaller than n = {n} (the cache size), got {m}.")
    try:
        a = sp.Rational(str(alpha).strip())
    except (TypeError, ValueError):
        raise ParameterError(f"alpha must be a number >= 0, got {alpha!r}.") from None
    if a < 0:
        raise ParameterError(f"alpha must be a number >= 0, got {alpha!r}.")
    pop = zipf(n, a)
    out = sp.symbols(f"o1:{n + 1}")
    inside = sp.symbols(f"c1:{n + 1}")
    transitions = []
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            jump = [0] * (2 * n)
            jump[i] -= 1
            jump[n + i] += 1
            jump[j] += 1
            jump[n + j] -= 1
            rate = pop[i] * out[i] * inside[j] / m
            transitions.append(Transition(tuple(jump), rate, f"request {i + 1} evicts {j + 1}"))
    laws = [tuple(1 if k in (i, n + i) else 0 for k in range(2 * n)) for i in range(n)]
    laws.append(tuple([0] * n + [1] * n))
    hit = sp.Add(*[p * c for p, c in zip(pop, inside, strict=True)])
    observables = {"hit_rate": hit, "miss_rate": 1 - hit}
    observables.update({f"hit_{i + 1}": c for i, c in enumerate(inside)})
    # the most popular items start outside, the m least popular inside (rmf_tool's start)
    reference = [sp.Integer(1)] * m + [sp.Integer(0)] * (n - m)
    reference += [sp.Integer(0)] * m + [sp.Integer(1)] * (n - m)
    info = ModelInfo(
        parameters=(),
        state_space=StateSpace("box"),
        conservation=tuple(laws),
        reference=tuple(reference),
        citation=CITATION,
        observables=observables,
    )
    return Model(
        "cache_random",
        (*out, *inside),
        (),
        transitions,
        info=info,
        key=("cache_random", n, m, str(a), _DIGEST),
    )
