"""The SIS ("malware") model of the size-expansion paper, with its expansion in closed form.

N. Gast, L. Bortolussi and M. Tribastone, "Size expansions of mean field
approximation: transient and steady-state analysis" (Performance Evaluation
129, 2019) use a one-dimensional susceptible-infected-susceptible model of
malware propagation as the example whose 1/N and 1/N^2 terms can be written
down by hand.  N machines, each infected or not; ``I`` is the fraction
infected.  A susceptible machine is infected from outside at rate ``a`` and
by contact at rate ``beta I``; an infected one is cleaned at rate ``gamma``:

* infection ``+1`` at rate ``beta(I) = (1 - I)(a + beta I)``,
* recovery ``-1`` at rate ``delta(I) = gamma I``

(per machine, i.e. the chain jumps by ``+-1/N`` at rates ``N beta(I)``,
``N delta(I)``).  The drift is ``f = beta(I) - delta(I)``, the diffusion
``q = beta(I) + delta(I)``.  With ``a > 0`` the chain is irreducible on
``{0, 1/N, ..., 1}``: a birth-death chain whose stationary law is the product
``pi(k + 1)/pi(k) = beta(k/N) / delta((k + 1)/N)`` (:func:`exact_law`), exact
at any precision -- an independent route to ``E[g(S_N)]``.

The closed form (derived here; :func:`closed_form`).  Let ``y = S - x*`` and
``f_k, q_k`` the k-th derivatives at the fixed point ``x*``.  The generator
applied to ``y^k`` is ``L y^k = sum_j C(k, j) y^(k-j) N^(1-j) m_j(S)`` with
``m_j = f`` for odd ``j`` and ``q`` for even ``j``; in the steady state
``E[L y^k] = 0`` for every ``k``.  Both rates are quadratic, so
``f(S) = f_1 y + f_2 y^2/2`` and ``q(S) = q_0 + q_1 y + q_2 y^2/2`` exactly,
with ``f_2 = q_2 = -2 beta``, ``q_0 = 2 gamma x*`` and

    x*  = 2a / (a + gamma - beta + sqrt(D)),   D = (beta - a - gamma)^2 + 4 a beta,
    f_1 = -sqrt(D),   q_1 = beta - a + gamma - 2 beta x*.

* ``k = 1``: ``f_1 E[y] + f_2 E[y^2]/2 = 0`` exactly, at every N;
* ``k = 2``: ``2 f_1 E[y^2] + f_2 E[y^3] + (q_0 + q_1 E[y] + q_2 E[y^2]/2)/N = 0``;
* ``k = 3``: ``3 f_1 E[y^3] + 3 f_2 E[y^4]/2 + 3 (q_0 E[y] + q_1 E[y^2] + q_2 E[y^3]/2)/N
  + E[f(S)]/N^2 = 0``, and ``E[f(S)] = 0`` by ``k = 1``.

Inserting ``E[y] = V/N + A/N^2``, ``E[y^2] = W/N + B/N^2``, ``E[y^3] = C/N^2``
and ``E[y^4] = 3 W^2/N^2`` (the moment expansion of :mod:`numeric.meanfield.observables`)
and matching powers of ``1/N``:

    W = -q_0 / (2 f_1),                     V = -f_2 W / (2 f_1),
    C = -(3 f_2 W^2 / 2 + q_0 V + q_1 W) / f_1,
    B = -(f_2 C + q_1 V + q_2 W / 2) / (2 f_1),
    A = -f_2 B / (2 f_1),

and for an observable ``g`` (derivatives at ``x*``)
``E[g(S_N)] = g(x*) + (g' V + g'' W/2)/N + (g' A + g'' B/2 + g''' C/6 +
g'''' W^2/8)/N^2 + O(1/N^3)``.  For the fraction infected, ``V/N`` is
negative when ``beta > 0``: the finite system is less infected than its mean
field.

Observables: ``infected = I``, ``susceptible = 1 - I``, ``infection_rate =
(1 - I)(a + beta I)`` (new infections per machine and unit time).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import sympy as sp

from derive.model import Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace

I = sp.Symbol("I")  # the fraction infected
A, BETA, GAMMA = sp.symbols("a beta gamma")
CITATION = (
    "N. Gast, L. Bortolussi and M. Tribastone, Size expansions of mean field approximation: "
    "transient and steady-state analysis, Performance Evaluation 129 (2019) (the malware example)"
)
_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def infection(x: Any, a: Any = A, beta: Any = BETA) -> Any:
    """Infection rate per machine, ``(1 - x)(a + beta x)``."""
    return (1 - x) * (a + beta * x)


def recovery(x: Any, gamma: Any = GAMMA) -> Any:
    """Recovery rate per machine, ``gamma x``."""
    return gamma * x


def sis() -> Model:
    """The SIS malware model with parameters ``a > 0`` (infection from outside),
    ``beta >= 0`` (by contact) and ``gamma > 0`` (recovery); reference point
    ``I = 0`` (nobody infected)."""
    info = ModelInfo(
        parameters=(
            Parameter("a", low=0, doc="infection rate from outside"),
            Parameter("beta", low=0, low_inclusive=True, doc="contact infection rate"),
            Parameter("gamma", low=0, doc="recovery rate"),
        ),
        state_space=StateSpace("box"),
        reference=(sp.Integer(0),),
        observables={
            "infected": I,
            "susceptible": 1 - I,
            "infection_rate": infection(I),
        },
        citation=CITATION,
    )
    transitions = [
        Transition((1,), infection(I), "infection"),
        Transition((-1,), recovery(I), "recovery"),
    ]
    return Model("sis", (I,), (A, BETA, GAMMA), transitions, info=info, key=("sis", _DIGEST))


def closed_form(a: Any = A, beta: Any = BETA, gamma: Any = GAMMA) -> dict[str, sp.Expr]:
    """``x*, V, W, A, B, C`` of the module docstring as SymPy expressions in
    ``a, beta, gamma`` (or their values, given as exact numbers)."""
    a, beta, gamma = (sp.sympify(v) for v in (a, beta, gamma))
    D = (beta - a - gamma) ** 2 + 4 * a * beta
    x = 2 * a / (a + gamma - beta + sp.sqrt(D))
    f1, f2 = -sp.sqrt(D), -2 * beta
    q0, q1, q2 = 2 * gamma * x, beta - a + gamma - 2 * beta * x, -2 * beta
    W = -q0 / (2 * f1)
    V = -f2 * W / (2 * f1)
    C = -(sp.Rational(3, 2) * f2 * W**2 + q0 * V + q1 * W) / f1
    B = -(f2 * C + q1 * V + q2 * W / 2) / (2 * f1)
    A2 = -f2 * B / (2 * f1)
    return {"s_star": x, "V": V, "W": W, "A": A2, "B": B, "C": C}


def expansion(g: sp.Expr, values: dict[str, sp.Expr]) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """``(g0, g1, g2)`` of ``E[g(S_N)]`` for an expression ``g`` in ``I`` from the
    closed form ``values`` (:func:`closed_form`)."""
    x, V, W = values["s_star"], values["V"], values["W"]
    d = [sp.diff(g, I, k).subs(I, x) for k in range(5)]
    g1 = d[1] * V + d[2] * W / 2
    g2 = d[1] * values["A"] + d[2] * values["B"] / 2 + d[3] * values["C"] / 6 + d[4] * W**2 / 8
    return d[0], g1, g2


def exact_law(N: int, a: Any, beta: Any, gamma: Any, dps: int = 40) -> list[Any]:
    """The stationary law ``pi(0..N)`` of the chain with N machines (mpmath at
    ``dps`` digits): the birth-death product ``pi(k+1)/pi(k) = beta(k/N)/delta((k+1)/N)``."""
    import mpmath

    with mpmath.workdps(dps + 10):
        a, beta, gamma = (mpmath.mpf(str(v)) for v in (a, beta, gamma))
        w = [mpmath.mpf(1)]
        for k in range(N):
            up = infection(mpmath.mpf(k) / N, a, beta)
            down = recovery(mpmath.mpf(k + 1) / N, gamma)
            w.append(w[-1] * up / down)
        total = mpmath.fsum(w)
        return [x / total for x in w]
