"""The generator of the finite-N chain on quadratic test functions (core paper, Lemma 7).

The chain jumps ``s -> s + l/N`` at rate ``N beta_l(s)``, so its generator is

    G g(s) = sum_l N beta_l(s) [g(s + l/N) - g(s)].

For a quadratic ``g`` the Taylor expansion stops at second order and, exactly,

    G g(s) = grad g(s) . f(s) + (1/2N) sum_ij Q_ij(s) d_ij g(s)        (Lemma 7, eq. (12))

with ``f = sum_l l beta_l`` and ``Q = sum_l l l^T beta_l``.  For the supermarket
model ``Q = 2 diag(f~)`` and the last term is the paper's
``(1/N) sum_i d_ii g f~_i``.  :func:`lemma7_difference` computes both sides
independently -- the left from the transitions, the right from the drift and
diffusion of :mod:`derive.objects` -- and returns their simplified difference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy as sp

from derive.model import N
from derive.stein import symmetric_symbols

if TYPE_CHECKING:
    from derive.model import Model


def quadratic_test_function(model: Model) -> sp.Expr:
    """A general quadratic ``g(s) = a_0 + sum_i a_i s_i + (1/2) s^T A s``.

    ``a_0``, ``a_i`` and the symmetric ``A`` (entries ``A_i_j``, ``i <= j``) are
    free symbols, so ``d_ij g = A_ij`` and ``d_i g = a_i + (A s)_i``.
    """
    b = model.n
    s = sp.Matrix(model.states)
    a = sp.Matrix([sp.Symbol(f"a_{i}") for i in range(1, b + 1)])
    A = symmetric_symbols("A", b)
    return sp.expand(sp.Symbol("a_0") + (a.T * s)[0, 0] + (s.T * A * s)[0, 0] / 2)


def generator_apply(model: Model, g: sp.Expr) -> sp.Expr:
    """``G g(s) = sum_l N beta_l(s) [g(s + l/N) - g(s)]``, exactly, expanded."""
    total = sp.Integer(0)
    for t in model.transitions:
        shift = {s: s + sp.Integer(li) / N for s, li in zip(model.states, t.jump, strict=True)}
        total += N * t.rate * (g.xreplace(shift) - g)
    return sp.expand(total)


def lemma7_rhs(model: Model, g: sp.Expr) -> sp.Expr:
    """``grad g . f + (1/2N) sum_ij Q_ij d_ij g`` (core paper, Lemma 7, eq. (12))."""
    states = model.states
    f = model.drift
    Q = model.diffusion
    first = sum((sp.diff(g, s) * fk for s, fk in zip(states, f, strict=True)), sp.Integer(0))
    second = sum(
        (
            Q[i, j] * sp.diff(g, states[i], states[j])
            for i in range(model.n)
            for j in range(model.n)
            if Q[i, j] != 0
        ),
        sp.Integer(0),
    )
    return sp.expand(first + second / (2 * N))


def lemma7_difference(model: Model, g: sp.Expr | None = None) -> sp.Expr:
    """``G g - [grad g . f + (1/2N) sum Q_ij d_ij g]``, simplified (zero by Lemma 7).

    Parameters
    ----------
    model:
        Any :class:`derive.model.Model` (rates may depend on ``N``, as for
        sampling without replacement).
    g:
        A quadratic in the state symbols; defaults to
        :func:`quadratic_test_function` (general symbolic coefficients).
    """
    g = quadratic_test_function(model) if g is None else sp.sympify(g)
    diff = sp.expand(generator_apply(model, g) - lemma7_rhs(model, g))
    if diff != 0:
        diff = sp.simplify(sp.cancel(sp.together(diff)))
    return diff
